import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bundledBayArea, bundledGazetteer, countyAt, kmBetween, placeAt } from '../../../../workers/snapshot/gazetteer.ts';
import { buildWindow } from '../../../../workers/snapshot/build.ts';
import { parseJsonLd } from '../../../../workers/snapshot/parse/jsonld.ts';
import { formatAddress, resolveVenue, type LocationInput, type Venue } from '../../../../workers/snapshot/normalize/venues.ts';

const g = bundledGazetteer();
const ADDRESS = /^[^,]+, [^,]+, CA \d{5}$/;

function venueOf(input: LocationInput): Venue {
  const got = resolveVenue(g, input);
  assert.ok(got !== null && got !== 'outside_area', `${input.location} @ ${input.lat},${input.lng} → ${String(got)}`);
  return got;
}

describe('resolveVenue', () => {
  test('every way calendars spell a known venue resolves to that venue, with its canonical address', () => {
    for (const v of g.venues) {
      const spellings = [
        v.name,
        `${v.name}, ${v.street}, ${v.city}, CA ${v.zip}`,
        `${v.street}, ${v.city}, CA ${v.zip}`,
        `${v.street.toUpperCase()}, ${v.city.toUpperCase()} CA ${v.zip}`,
        ...v.aliases.map((a) => `${a} - ${v.street}, ${v.city}, CA ${v.zip}`),
      ];
      for (const text of spellings) {
        const got = venueOf({ location: text, lat: null, lng: null, organizer: v.organizer });
        assert.equal(got.key, v.key, `${text} → ${got.key}`);
        assert.equal(formatAddress(got), `${v.street}, ${v.city}, CA ${v.zip}`);
        assert.match(formatAddress(got), ADDRESS);
      }
    }
  });

  test('a name several organizers share is settled by the organizer', () => {
    const shared = [...g.venuesByName.entries()].find(([, vs]) => new Set(vs.map((v) => v.organizer)).size > 1);
    if (!shared) return;
    for (const v of shared[1]) assert.equal(venueOf({ location: shared[0], lat: null, lng: null, organizer: v.organizer }).key, v.key);
  });

  test('an unknown street in a known city is an ad-hoc venue at the upstream coordinates, else the city centre', () => {
    const oakland = g.cityByName.get('oakland')!;
    const at = venueOf({ location: 'Lakeside Garden Center, 666 Bellevue Ave, Oakland, CA 94610', lat: 37.8085, lng: -122.2579, organizer: null });
    assert.deepEqual([at.name, at.street, at.city, at.zip, at.lat, at.lng], ['Lakeside Garden Center', '666 Bellevue Ave', 'Oakland', '94610', 37.8085, -122.2579]);
    assert.equal(at.destination, oakland.destination);
    const centre = venueOf({ location: '123 Nowhere St, Oakland, CA', lat: null, lng: null, organizer: null });
    assert.deepEqual([centre.lat, centre.lng, formatAddress(centre)], [oakland.lat, oakland.lng, '123 Nowhere St, Oakland, CA']);
  });

  test('without coordinates a ZIP addressed to the city places the venue at its centroid (missingmaps-mapathons.csv)', () => {
    // "First Congregational Church of Palo Alto 1985 Louis Road, Palo Alto, CA 94303, Palo Alto, United States"
    const v = venueOf({ location: 'First Congregational Church of Palo Alto 1985 Louis Road, Palo Alto, CA 94303, Palo Alto, United States', lat: null, lng: null, organizer: null });
    assert.deepEqual([v.city, v.zip, v.destination], ['Palo Alto', '94303', 'south-bay']);
    const paloAlto = g.cityByName.get('palo alto')!;
    assert.notDeepEqual([v.lat, v.lng], [paloAlto.lat, paloAlto.lng]);
    assert.ok(Math.abs(v.lat - 37.44) < 0.03 && Math.abs(v.lng + 122.13) < 0.03, `${v.lat},${v.lng}`);
    // A ZIP of another city does not move the venue there: the city centre it is.
    const oakland = g.cityByName.get('oakland')!;
    const mistyped = venueOf({ location: '123 Nowhere St, Oakland, CA 94303', lat: null, lng: null, organizer: null });
    assert.deepEqual([mistyped.lat, mistyped.lng], [oakland.lat, oakland.lng]);
  });

  test('city names match case- and accent-insensitively (San José)', () => {
    const v = venueOf({ location: '1 Somewhere Plaza, San José, CA 95113', lat: null, lng: null, organizer: null });
    assert.equal(v.city, 'San Jose');
    // missingmaps-mapathons.csv: "Engineering building, room 112, San jose, United States" at 37.33636,-121.88162
    const sjsu = venueOf({ location: 'Engineering building, room 112, San jose, United States', lat: 37.33636, lng: -121.88162, organizer: null });
    assert.deepEqual([sjsu.city, sjsu.lat, sjsu.lng, sjsu.destination], ['San Jose', 37.33636, -121.88162, 'south-bay']);
  });

  test('coordinates near a known venue never make an event that venue: only its name does', () => {
    const v = g.venues[0]!;
    const near = venueOf({ location: null, lat: v.lat + 0.0005, lng: v.lng, organizer: null });
    assert.notEqual(near.key, v.key);
    assert.deepEqual([near.lat, near.lng, near.precision], [v.lat + 0.0005, v.lng, 'exact']);
    // Issue 25: a show at a café became "Aquarium of the Bay" because its coordinates were near it.
    const aquarium = g.venueByKey.get('aquarium-of-the-bay')!;
    const cafe = venueOf({ location: 'Café Musique, 2 Beach St, San Francisco, CA 94133', lat: aquarium.lat + 0.0003, lng: aquarium.lng, organizer: null });
    assert.equal(cafe.name, 'Café Musique');
    assert.equal(venueOf({ location: aquarium.name, lat: aquarium.lat + 0.0003, lng: aquarium.lng, organizer: null }).key, aquarium.key);
    const far = venueOf({ location: null, lat: 37.7689, lng: -122.4846, organizer: null });
    assert.equal(far.city, 'San Francisco');
  });

  test("a known venue's street under another name keeps the upstream's name (two businesses share an address)", () => {
    for (const v of g.venues.filter((k) => /^\d/.test(k.street))) {
      const other = venueOf({ location: `Tiny Tots Education Center, ${v.street}, ${v.city}, CA ${v.zip}`, lat: null, lng: null, organizer: null });
      assert.equal(other.name, 'Tiny Tots Education Center', v.key);
      assert.notEqual(other.key, v.key);
      // Same address: the known venue's coordinates are this place's too.
      assert.deepEqual([other.lat, other.lng, other.precision], [v.lat, v.lng, 'venue']);
    }
  });

  test('upstream coordinates outside every destination mean the event is not ours, whatever city the text names', () => {
    // songkick-years-and-years.jsonld.html: Olympia Theatre, "streetAddress":"72 Dame Street",
    // "addressLocality":"Dublin", "addressCountry":"Ireland", "postalCode":"Dublin 2", geo 53.3442216,-6.2635249
    const cases: [string, number, number][] = [
      ['Olympia Theatre, 72 Dame Street, Dublin, Dublin 2, Ireland', 53.3442216, -6.2635249],
      ['Olympia Theatre, 72 Dame Street, Dublin, Dublin 2', 53.3442216, -6.2635249],
      // missingmaps-mapathons.csv
      ['Perkins Student Center, Gallery, Newark, Delawareun, United States', 39.67696, -75.74939],
      ["Toowong Library, Brisbane, Australia", -27.48566, 152.99307],
      ['George Mason University - Exploratory Hall room 2301, Fairfax, VA, United States', 38.82986, -77.30559],
      ['Auditorio de Educación Continua, Ciudad de la Investigación. Universidad de Costa Rica, San Pedro, San José, Costa Rica', 9.93727, -84.04231],
      ['Shields Library room 360, Davis, CA, United States', 38.5397, -121.74959],
      ['Central Valley', 36.0, -120.0],
    ];
    for (const [location, lat, lng] of cases) assert.equal(resolveVenue(g, { location, lat, lng, organizer: null }), 'outside_area', location);
  });

  test('an address naming another country, state or a non-California ZIP is not the Bay Area city of that name', () => {
    for (const location of [
      // songkick-years-and-years.jsonld.html, as the JSON-LD parser joins it (with "addressCountry":"Ireland")
      'Olympia Theatre, 72 Dame Street, Dublin, Dublin 2, Ireland',
      // missingmaps-mapathons.csv
      'Perkins Student Center, Newark, Delaware, United States',
      'Toowong Library, Brisbane, Australia',
      'George Mason University - Exploratory Hall room 2301, Fairfax, VA, United States',
      'Auditorio de Educación Continua, Ciudad de la Investigación. Universidad de Costa Rica, San Pedro, San José, Costa Rica',
      'Portmarnock Community School, Dublin, Ireland',
      // songkick-maximo-park.jsonld.html's US shape ("addressRegion":"PA","postalCode":"19123") in a Bay Area city's name
      '1 Main Street, Newark, DE 19716, US',
      'Somewhere, Richmond, 23219',
    ]) {
      assert.equal(resolveVenue(g, { location, lat: null, lng: null, organizer: null }), 'outside_area', location);
    }
    // "UK" is a country, "US" and "United States" are not (songkick's "addressCountry":"UK"/"US").
    assert.equal(resolveVenue(g, { location: 'Cliffs Pavillion, Westcliff-on-sea, UK', lat: null, lng: null, organizer: null }), 'outside_area');
    assert.equal(venueOf({ location: 'The Fillmore, 1805 Geary Blvd, San Francisco, CA 94115, US', lat: null, lng: null, organizer: null }).city, 'San Francisco');
  });

  test("the JSON-LD parser keeps schema.org's addressCountry, so a Songkick venue without geo is still not Dublin, CA", () => {
    // songkick-years-and-years.jsonld.html's Olympia Theatre, less its "geo".
    const page = `<script type="application/ld+json">${JSON.stringify({
      '@context': 'http://schema.org',
      '@type': 'MusicEvent',
      name: 'Years & Years',
      startDate: '2015-11-05T19:00:00+0000',
      location: {
        '@type': 'Place',
        address: { '@type': 'PostalAddress', addressLocality: 'Dublin', addressCountry: 'Ireland', streetAddress: '72 Dame Street', postalCode: 'Dublin 2' },
        name: 'Olympia Theatre',
      },
    })}</script>`;
    const [ev] = parseJsonLd(page, { window: buildWindow(new Date('2015-10-15T12:00:00Z')) }).events;
    assert.equal(ev?.location, 'Olympia Theatre, 72 Dame Street, Dublin, Dublin 2, Ireland');
    assert.equal(resolveVenue(g, { location: ev.location, lat: ev.lat, lng: ev.lng, organizer: 'Songkick' }), 'outside_area');
  });

  test('Bay Area coordinates without a known city take the city of the nearest ZIP centroid (missingmaps-mapathons.csv)', () => {
    // "Code for America" at 37.77567,-122.41364: no city in the text, exact San Francisco coordinates.
    const cfa = venueOf({ location: 'Code for America', lat: 37.77567, lng: -122.41364, organizer: null });
    assert.deepEqual([cfa.name, cfa.city, cfa.destination, cfa.lat, cfa.lng, formatAddress(cfa)], ['Code for America', 'San Francisco', 'san-francisco', 37.77567, -122.41364, 'San Francisco, CA']);
    // "Wikimedia Foundation" at 37.78687,-122.39956: the nearest ZIP in the table is a firm's own
    // (94138 "Wells Fargo Bank"), which names no city.
    const wmf = venueOf({ location: 'Wikimedia Foundation', lat: 37.78687, lng: -122.39956, organizer: null });
    assert.deepEqual([wmf.city, wmf.destination], ['San Francisco', 'san-francisco']);
    // "Stanford Geospatial Center / Branner Library Teaching Corner: Mitchell Earth Sciences Building , Stanford, United States"
    const stanford = venueOf({
      location: 'Stanford Geospatial Center / Branner Library Teaching Corner: Mitchell Earth Sciences Building , Stanford, United States',
      lat: 37.42643,
      lng: -122.17299,
      organizer: null,
    });
    // Stanford is no gazetteer city: its destination is its nearest one's (Menlo Park and Palo Alto are both ~3 km off).
    assert.equal(stanford.city, 'Stanford');
    assert.ok(['peninsula', 'south-bay'].includes(stanford.destination), stanford.destination);
  });

  test('near a city boundary the nearest ZIP centroids vote, and a text city any of them names is kept', () => {
    // Oakland's Montclair Branch and Chabot Space & Science Center are nearer Piedmont's and Canyon's
    // single centroids than any one of Oakland's.
    for (const [lat, lng] of [[37.8267, -122.2104], [37.8188, -122.1807]] as const) {
      // ~180 m west, beyond the 150 m within which the known venue itself would be found.
      assert.equal(venueOf({ location: null, lat, lng: lng - 0.002, organizer: null }).city, 'Oakland', `${lat},${lng}`);
      assert.equal(venueOf({ location: 'Community Room, 1 Main St, Oakland, CA', lat, lng, organizer: null }).city, 'Oakland');
    }
  });

  test('a text city far from the upstream coordinates gives way to the city they are in', () => {
    // Dublin, CA is ~45 km from San Francisco's Mission District.
    const v = venueOf({ location: 'Community Room, 100 Main St, Dublin, CA', lat: 37.7599, lng: -122.4148, organizer: null });
    assert.deepEqual([v.city, v.street, v.zip, v.destination], ['San Francisco', null, null, 'san-francisco']);
  });

  test("every gazetteer venue lies in its destination's area, in a city its coordinates agree with", () => {
    for (const v of g.venues) {
      const here = placeAt(g, v.lat, v.lng);
      const city = g.cityByName.get(v.city.toLowerCase())!;
      assert.ok(here, v.key);
      // ZIP 94404 is addressed to San Mateo though Foster City Library is in it: a city centre within 5 km agrees too.
      const agrees = here.city === city.name || here.nearby.has(city.name.toLowerCase()) || kmBetween(city.lat, city.lng, v.lat, v.lng) <= 5;
      assert.ok(agrees, `${v.key}: ${v.city} vs ${here.city}`);
      assert.equal(here.destination, city.destination, v.key);
    }
  });

  test('no gazetteer city reads as another country or state', () => {
    for (const c of g.cities) {
      // A census-designated place needs its state or ZIP beside it (see below).
      const tail = c.kind === 'cdp' || c.kind === 'postal' ? ', CA' : '';
      for (const n of [c.name, ...c.aliases]) assert.equal(venueOf({ location: `Town Hall, ${n}${tail}`, lat: null, lng: null, organizer: null }).city, c.name, n);
    }
  });

  describe('issue 25: addresses of the nine counties, as real feeds write them', () => {
    const area = bundledBayArea();
    const at = (location: string): Venue => venueOf({ location, lat: null, lng: null, organizer: null });

    test('a full street address with no comma before the city, with a country tail (the SF kids\' calendar)', () => {
      const glen = at('Glen Park Branch Library, 2825 Diamond Street San Francisco, CA 94131 United States');
      assert.deepEqual([glen.name, glen.street, glen.city, glen.zip, glen.destination, glen.precision], ['Glen Park Branch Library', '2825 Diamond Street', 'San Francisco', '94131', 'san-francisco', 'zip']);
      // The Main Library's own address, named by nothing else, is the known venue.
      assert.equal(at('100 Larkin Street San Francisco, CA 94102').key, 'sfpl-main');
      assert.equal(at('100 Larkin Street San Francisco, CA 94102 USA').key, 'sfpl-main');
    });

    test('a city recreation feed\'s "630 Summerfield Road Santa Rosa CA 95405"', () => {
      const v = at('630 Summerfield Road Santa Rosa CA 95405');
      assert.deepEqual([v.street, v.city, v.zip, v.destination, v.precision], ['630 Summerfield Road', 'Santa Rosa', '95405', 'north-bay', 'zip']);
    });

    test('"… at Petaluma Regional Library", "Occidental, CA 95465", a Napa venue', () => {
      const p = at('Toddler Storytime at Petaluma Regional Library');
      assert.deepEqual([p.name, p.city, p.destination, p.precision], ['Petaluma Regional Library', 'Petaluma', 'north-bay', 'place']);
      const o = at('Occidental, CA 95465');
      assert.deepEqual([o.city, o.zip, o.destination, o.precision], ['Occidental', '95465', 'north-bay', 'zip']);
      const napa = venueOf({ location: 'Napa Valley Museum, 55 Presidents Circle, Yountville, CA 94599', lat: 38.3906, lng: -122.3634, organizer: null });
      assert.deepEqual([napa.city, napa.destination, napa.precision], ['Yountville', 'north-bay', 'exact']);
    });

    test('a room is not the venue\'s name when the text names the building', () => {
      for (const room of ['Room 213', 'Meeting Room B', "Children's Room", 'Suite 200', '2nd Floor']) {
        const v = at(`${room}, Mission Neighborhood Center, 362 Capp St, San Francisco, CA 94110`);
        assert.equal(v.name, 'Mission Neighborhood Center', room);
        assert.equal(at(`Mission Neighborhood Center - ${room}, 362 Capp St, San Francisco, CA 94110`).name, 'Mission Neighborhood Center', room);
      }
      // No building named: the street line says which place it is, not the room.
      assert.equal(at('Room 213, 362 Capp St, San Francisco, CA 94110').name, '362 Capp St');
    });

    test('out of area is dropped as outside_area, never moved', () => {
      for (const location of ['123 K St, Sacramento, CA 95814', '1 Main St Davis CA 95616', '200 Pacific Ave, Santa Cruz, CA 95060', 'Some Hall, Stockton, CA 95202']) {
        assert.equal(resolveVenue(g, { location, lat: null, lng: null, organizer: null }), 'outside_area', location);
      }
      // Davis is 2 km past Solano's line; Santa Cruz's coast is beside San Mateo's.
      for (const [lat, lng] of [[38.5449, -121.7405], [36.9741, -122.0308], [37.9577, -121.2908]] as const) {
        assert.equal(resolveVenue(g, { location: 'Library', lat, lng, organizer: null }), 'outside_area', `${lat},${lng}`);
      }
    });

    test('bay-shore and waterfront points are in their county (the 1:10m outline stops short of them)', () => {
      const shore: [string, number, number, string][] = [
        ['Pier 39', 37.8087, -122.4098, 'san-francisco'],
        ['Treasure Island', 37.8235, -122.3706, 'san-francisco'],
        ['Crown Memorial State Beach', 37.7629, -122.2635, 'east-bay'],
        ['Berkeley Marina', 37.8652, -122.3139, 'east-bay'],
        ['Sausalito waterfront', 37.8591, -122.4853, 'north-bay'],
        ['Coyote Point', 37.588, -122.322, 'peninsula'],
        ['Alviso Marina', 37.4296, -121.9786, 'south-bay'],
      ];
      for (const [name, lat, lng, destination] of shore) {
        assert.equal(countyAt(lat, lng)?.destination, destination, name);
        assert.equal(venueOf({ location: name, lat, lng, organizer: null }).destination, destination, name);
      }
    });

    test('every place and ZIP of the data file resolves to itself, with commas or without', () => {
      for (const p of area.places) {
        const c = g.cityByName.get(p.name.toLowerCase().normalize('NFD').replace(/\p{M}/gu, ''));
        assert.ok(c, p.name);
        // A place two counties share a name with (Mountain View) is the incorporated one.
        if (c.county !== p.county) continue;
        const zip = [...area.zips.values()].find((z) => g.cityByName.get(z.city.toLowerCase()) === c)?.zip ?? '';
        for (const text of [`Some Hall, 1 Main St, ${p.name}, CA ${zip}`.trim(), `1 Main St ${p.name} CA ${zip}`.trim(), `Some Hall, ${p.name}, CA`]) {
          const v = at(text);
          assert.deepEqual([v.city, v.destination], [c.name, c.destination], text);
        }
      }
      for (const z of area.zips.values()) {
        const v = at(`1 Main St, CA ${z.zip}`);
        assert.equal(v.zip, z.zip);
        // The destination is the city's the mail names (94128, SFO in San Mateo County, is "San Francisco").
        assert.equal(v.destination, g.cityByName.get(z.city.toLowerCase())?.destination ?? area.destinationOf.get(z.county), z.zip);
      }
    });

    test('a census-designated place\'s bare name is not enough (Kensington, Inverness are elsewhere too)', () => {
      assert.equal(resolveVenue(g, { location: 'Kensington', lat: null, lng: null, organizer: null }), null);
      assert.equal(at('Kensington, CA').city, 'Kensington');
      assert.equal(at('Inverness, CA 94937').destination, 'north-bay');
    });
  });

  test('nothing locatable → null (the build falls back to the source default venue)', () => {
    assert.equal(resolveVenue(g, { location: 'Online via Zoom', lat: null, lng: null, organizer: null }), null);
  });
});
