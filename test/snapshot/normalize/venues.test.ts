import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bundledBayArea, bundledGazetteer, countyAt, kmBetween, placeAt } from '../../../snapshot/gazetteer.ts';
import { buildWindow } from '../../../snapshot/build/build.ts';
import { parseJsonLd } from '../../../snapshot/parse/jsonld.ts';
import { normalizeAll, sourceContext } from '../../../snapshot/normalize/event.ts';
import { feedIsElsewhere, formatAddress, placeInTitle, resolveVenue, type LocationInput, type Venue } from '../../../snapshot/normalize/venues.ts';
import { parseICal } from '../../../snapshot/parse/ical.ts';
import { parseRegistry } from '../../../snapshot/registry.ts';
import { WINDOW } from '../parse/helpers.ts';

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
    assert.deepEqual(
      [at.name, at.street, at.city, at.zip, at.lat, at.lng],
      ['Lakeside Garden Center', '666 Bellevue Ave', 'Oakland', '94610', 37.8085, -122.2579],
    );
    assert.equal(at.destination, oakland.destination);
    const centre = venueOf({ location: '123 Nowhere St, Oakland, CA', lat: null, lng: null, organizer: null });
    assert.deepEqual([centre.lat, centre.lng, formatAddress(centre)], [oakland.lat, oakland.lng, '123 Nowhere St, Oakland, CA']);
  });

  test('without coordinates a ZIP addressed to the city places the venue at its centroid (missingmaps-mapathons.csv)', () => {
    // "First Congregational Church of Palo Alto 1985 Louis Road, Palo Alto, CA 94303, Palo Alto, United States"
    const v = venueOf({
      location: 'First Congregational Church of Palo Alto 1985 Louis Road, Palo Alto, CA 94303, Palo Alto, United States',
      lat: null,
      lng: null,
      organizer: null,
    });
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
      ['Toowong Library, Brisbane, Australia', -27.48566, 152.99307],
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
    assert.equal(
      venueOf({ location: 'The Fillmore, 1805 Geary Blvd, San Francisco, CA 94115, US', lat: null, lng: null, organizer: null }).city,
      'San Francisco',
    );
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
    assert.deepEqual(
      [cfa.name, cfa.city, cfa.destination, cfa.lat, cfa.lng, formatAddress(cfa)],
      ['Code for America', 'San Francisco', 'san-francisco', 37.77567, -122.41364, 'San Francisco, CA'],
    );
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
    for (const [lat, lng] of [
      [37.8267, -122.2104],
      [37.8188, -122.1807],
    ] as const) {
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
      for (const n of [c.name, ...c.aliases])
        assert.equal(venueOf({ location: `Town Hall, ${n}${tail}`, lat: null, lng: null, organizer: null }).city, c.name, n);
    }
  });

  describe('issue 25: addresses of the nine counties, as real feeds write them', () => {
    const area = bundledBayArea();
    const at = (location: string): Venue => venueOf({ location, lat: null, lng: null, organizer: null });

    test("a full street address with no comma before the city, with a country tail (the SF kids' calendar)", () => {
      const glen = at('Glen Park Branch Library, 2825 Diamond Street San Francisco, CA 94131 United States');
      assert.deepEqual(
        [glen.name, glen.street, glen.city, glen.zip, glen.destination, glen.precision],
        ['Glen Park Branch Library', '2825 Diamond Street', 'San Francisco', '94131', 'san-francisco', 'zip'],
      );
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

    test("a room is not the venue's name when the text names the building", () => {
      for (const room of ['Room 213', 'Meeting Room B', "Children's Room", 'Suite 200', '2nd Floor']) {
        const v = at(`${room}, Mission Neighborhood Center, 362 Capp St, San Francisco, CA 94110`);
        assert.equal(v.name, 'Mission Neighborhood Center', room);
        assert.equal(at(`Mission Neighborhood Center - ${room}, 362 Capp St, San Francisco, CA 94110`).name, 'Mission Neighborhood Center', room);
      }
      // No building named: the street line says which place it is, not the room.
      assert.equal(at('Room 213, 362 Capp St, San Francisco, CA 94110').name, '362 Capp St');
    });

    test('out of area is dropped as outside_area, never moved', () => {
      for (const location of [
        '123 K St, Sacramento, CA 95814',
        '1 Main St Davis CA 95616',
        '200 Pacific Ave, Santa Cruz, CA 95060',
        'Some Hall, Stockton, CA 95202',
      ]) {
        assert.equal(resolveVenue(g, { location, lat: null, lng: null, organizer: null }), 'outside_area', location);
      }
      // Davis is 2 km past Solano's line; Santa Cruz's coast is beside San Mateo's.
      for (const [lat, lng] of [
        [38.5449, -121.7405],
        [36.9741, -122.0308],
        [37.9577, -121.2908],
      ] as const) {
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

    test("a census-designated place's bare name is not enough (Kensington, Inverness are elsewhere too)", () => {
      assert.equal(resolveVenue(g, { location: 'Kensington', lat: null, lng: null, organizer: null }), null);
      assert.equal(at('Kensington, CA').city, 'Kensington');
      assert.equal(at('Inverness, CA 94937').destination, 'north-bay');
    });
  });

  describe("issue 25: a generic name is not another town's known venue", () => {
    const spl = 'The Seattle Public Library';
    const resolve = (location: string, organizer: string | null): ReturnType<typeof resolveVenue> =>
      resolveVenue(g, { location, lat: null, lng: null, organizer });
    const keyOf = (location: string, organizer: string | null): string | null => {
      const v = resolve(location, organizer);
      return v === null || v === 'outside_area' ? null : v.key;
    };
    // Names made only of words that say what kind of building it is, as the gazetteer holds them.
    const generic: [string, string][] = [
      ['Central Library', 'bpl-central'],
      ['Main Library', 'sfpl-main'],
      ['Main Library', 'opl-main'],
      ['Central Park', 'smpr-central-park'],
      ["Children's Library", 'pacl-childrens'],
      ['Downtown Library', 'pacl-downtown'],
      ['North Branch', 'bpl-north'],
      ['Civic Center Library', 'mcfl-civic-center'],
    ];

    test('the gold set\'s Seattle "Central Library, …" items are not Berkeley\'s Central Library', () => {
      // spl-central-library-seattle.ics, LOCATION lines as the feed writes them (entities decoded).
      for (const location of [
        'Central Library, Level 5 - Mixing Chamber Meeting Room',
        'Central Library, Level 8 - Gallery',
        'Central Library, Level 1 - Story Hour Room in Children’s C',
        'Central Library, Área para niños',
        'Central Library',
        'CENTRAL LIBRARY',
        'The Central Library (Level 4 - Room 2)',
      ]) {
        for (const organizer of [spl, null, 'Some Aggregator']) assert.notEqual(keyOf(location, organizer), 'bpl-central', `${location} / ${organizer}`);
      }
      // Naming Seattle or Washington settles it: elsewhere, even for Berkeley's own organizer.
      for (const location of [
        'Central Library, Seattle, WA',
        'Central Library, 1000 4th Ave, Seattle, WA 98104',
        'Central Library, Seattle WA',
        'Central Library - Seattle, Washington',
      ]) {
        for (const organizer of [spl, 'Berkeley Public Library']) assert.equal(resolve(location, organizer), 'outside_area', `${location} / ${organizer}`);
      }
    });

    test("a generic name is the known venue for that venue's organizer, or with its city or street", () => {
      for (const [name, key] of generic) {
        const v = g.venueByKey.get(key)!;
        assert.ok([v.name, ...v.aliases].includes(name), `${key} is called ${name}`);
        assert.equal(keyOf(name, v.organizer), key, `${name} by ${v.organizer}`);
        assert.equal(keyOf(`${name}, Level 2 - Meeting Room`, v.organizer), key, `${name} + room, by ${v.organizer}`);
        for (const organizer of [spl, 'Somewhere Else Parks and Recreation', null]) {
          assert.notEqual(keyOf(name, organizer), key, `${name} by ${organizer}`);
          assert.equal(keyOf(`${name}, ${v.city}`, organizer), key, `${name}, ${v.city} by ${organizer}`);
          assert.equal(keyOf(`${name}, ${v.city}, CA`, organizer), key, `${name}, ${v.city}, CA by ${organizer}`);
          assert.equal(keyOf(`${name}, ${v.street}, ${v.city}, CA ${v.zip}`, organizer), key, `${name} at its address, by ${organizer}`);
          assert.equal(keyOf(`${name} (${v.city})`, organizer), key, `${name} (${v.city}) by ${organizer}`);
        }
      }
      // Another Bay Area city named: that city's, never the organizer's own building elsewhere.
      assert.equal(keyOf('Main Library, Oakland', 'San Francisco Public Library'), 'opl-main');
      assert.equal(keyOf('Main Library, San Francisco', 'Oakland Public Library'), 'sfpl-main');
      assert.notEqual(keyOf('Central Library, Oakland, CA', 'Berkeley Public Library'), 'bpl-central');
      // Spelled with the organizer or its town, the name is no longer generic.
      assert.equal(keyOf('Berkeley Central Library', spl), 'bpl-central');
      assert.equal(keyOf('SFPL Main Library', null), 'sfpl-main');
    });

    test('a distinctive name is still the known venue for anyone who writes it', () => {
      for (const key of ['exploratorium', 'pacl-mitchell-park', 'lawrence-hall', 'sfpl-mission-bay', 'cccl-concord']) {
        const v = g.venueByKey.get(key)!;
        for (const organizer of [spl, 'Some Aggregator', null]) assert.equal(keyOf(v.name, organizer), key, `${v.name} by ${organizer}`);
      }
    });
  });

  describe('issue 25: a town of another state is not the Bay Area town of its name', () => {
    const resolve = (location: string, feedElsewhere = false): ReturnType<typeof resolveVenue> =>
      resolveVenue(g, { location, lat: null, lng: null, organizer: null, feedElsewhere });

    test('a state after the town, by code or name, with or without comma or ZIP, anywhere in the text', () => {
      for (const location of [
        'Concord Conservatory of Music, Concord, MA',
        'Concord Conservatory of Music, Concord MA',
        'Concord Conservatory of Music, Concord, MA 01742',
        'Concord Conservatory of Music, Concord MA 01742',
        'Concord Conservatory of Music, 1317 Main St, Concord, MA 01742',
        '1317 Main St Concord MA 01742',
        'Concord MA 01742',
        'Concord, MA',
        'Concord MA',
        'CONCORD MA',
        'Concord, Massachusetts',
        'Concord Massachusetts',
        'Concord Conservatory of Music, Concord, Massachusetts 01742',
        'Concord Conservatory of Music (Concord, MA)',
        'Concord, MA - Concord Conservatory of Music',
        'Concord MA: Concord Conservatory of Music',
        'Concord Massachusetts: Concord Conservatory of Music',
        'Concord Conservatory of Music, 1317 Main St., Concord, MA, USA',
        'Walnut Creek Grange, Walnut Creek OH 44687',
        'Berkeley Springs WV',
        'Richmond VA 23219',
        'Fremont, Nebraska',
        'Dublin NH',
        'Hayward Wisconsin',
        'Alameda, New Mexico',
        'Oakland Township MI',
        'Sunnyvale TX',
      ]) {
        assert.equal(resolve(location), 'outside_area', location);
      }
    });

    test("a state's name or a code-like word that is not a state after a town stays ours", () => {
      const cases: [string, string][] = [
        ['Concord, CA', 'Concord'],
        ['Concord CA 94520', 'Concord'],
        ['Todos Santos Plaza, Concord, California', 'Concord'],
        ['Washington Square Park, San Francisco', 'San Francisco'],
        ['Booker T. Washington, 800 Presidio Ave, San Francisco, CA', 'San Francisco'],
        ['Potrero Hill Recreation Center, 801 Arkansas St, San Francisco, CA 94107', 'San Francisco'],
        ['Jack London Square, Oakland', 'Oakland'],
        // "OR", "CO", "IN" are words before they are states: not without a ZIP.
        ['Library Lawn OR Community Room, Oakland', 'Oakland'],
        ['ACME CO, 1 Main St, Oakland, CA', 'Oakland'],
      ];
      for (const [location, city] of cases) {
        const v = resolve(location);
        assert.ok(v !== null && v !== 'outside_area', location);
        assert.equal(v.city, city, location);
      }
    });

    test("in a feed placed in another state, a bare town name is that state's; a street, ZIP, state or coordinates still place it here", () => {
      // boston-jazz-weekly.ics: the item served in Concord, CA, and what the feed's other items say.
      const bare = 'Concord Conservatory of Music, Concord';
      assert.equal(venueOf({ location: bare, lat: null, lng: null, organizer: null }).city, 'Concord');
      // A known venue whose name is the town's and a kind of building ("Concord Library") is no more than the town's name.
      for (const location of [
        bare,
        'Concord',
        'Concord Free Public Library',
        'Concord Public Library',
        'Toddler Storytime at Concord Library',
        'Fremont Abbey, Fremont',
      ]) {
        assert.equal(resolve(location, true), 'outside_area', location);
      }
      for (const location of ['Todos Santos Plaza, Concord, CA', '1950 Parkside Dr, Concord', 'Concord, 94520', 'Concord Library, 2900 Salvio St, Concord']) {
        const v = resolve(location, true);
        assert.ok(v !== null && v !== 'outside_area', location);
        assert.equal(v.city, 'Concord', location);
      }
      // …as are a distinctive known venue, and a town's library for its own organizer.
      assert.equal((resolve('Lindsay Wildlife Experience', true) as Venue).key, 'lindsay-wildlife');
      assert.equal(
        (resolveVenue(g, { location: 'Concord Library', lat: null, lng: null, organizer: 'Contra Costa County Library', feedElsewhere: true }) as Venue).key,
        'cccl-concord',
      );
      const withGeo = resolveVenue(g, { location: bare, lat: 37.9722, lng: -122.0016, organizer: null, feedElsewhere: true });
      assert.ok(withGeo !== null && withGeo !== 'outside_area' && withGeo.city === 'Concord');
    });

    test('which feeds are placed elsewhere: those whose stated addresses are in another state or country', () => {
      const at = (location: string | null, lat: number | null = null, lng: number | null = null): LocationInput => ({ location, lat, lng, organizer: null });
      const boston = [
        '400 Soldiers Field Rd, Boston, MA 02134',
        'Lizard Lounge, Cambridge',
        '1 Bennett St, Cambridge, MA 02138',
        '135 Congress St, Portsmouth, NH 03801',
        'Concord Conservatory of Music, Concord',
        'The Center for Arts in Natick, Natick',
      ].map((l) => at(l));
      assert.equal(feedIsElsewhere(g, boston), true);
      // Coordinates far from California say so too.
      assert.equal(feedIsElsewhere(g, [at('Club Passim', 42.3735, -71.1196), at('Regattabar', 42.3725, -71.1216), at('Concord')]), true);
      // One address elsewhere is not a region.
      assert.equal(feedIsElsewhere(g, [at('400 Soldiers Field Rd, Boston, MA 02134'), at('Concord')]), false);
      // A Bay Area feed with a few items away (a touring act, a conference) stays a Bay Area feed.
      const bay = [
        ...[
          'Glen Park Branch Library, 2825 Diamond Street San Francisco, CA 94131',
          'Exploratorium',
          '630 Summerfield Road Santa Rosa CA 95405',
          'Todos Santos Plaza, Concord, CA',
        ].map((l) => at(l)),
        at('Code for America', 37.77567, -122.41364),
        at('Olympia Theatre, 72 Dame Street, Dublin, Ireland'),
        at('1 Main St, Portland, OR 97201'),
      ];
      assert.equal(feedIsElsewhere(g, bay), false);
      // California outside the nine counties is not another region: a Sacramento calendar's "Concord" is ours.
      assert.equal(
        feedIsElsewhere(
          g,
          ['123 K St, Sacramento, CA 95814', '1 Main St Davis CA 95616', 'Some Hall, Stockton, CA 95202', 'Concord'].map((l) => at(l)),
        ),
        false,
      );
    });

    test('normalizeAll reads the region from the whole feed (boston-jazz-weekly.ics)', () => {
      const vevent = (uid: string, day: number, title: string, location: string): string =>
        [
          'BEGIN:VEVENT',
          `UID:${uid}`,
          `DTSTART:202612${String(day).padStart(2, '0')}T230000Z`,
          `SUMMARY:${title}`,
          `LOCATION:${location.replace(/,/g, '\\,')}`,
          'END:VEVENT',
        ].join('\r\n');
      const feed = (locations: readonly string[]): string =>
        [
          'BEGIN:VCALENDAR',
          'VERSION:2.0',
          'PRODID:-//test//EN',
          ...locations.map((l, i) => vevent(`e${i}@jazz`, 1 + i, `Set ${i} at Jazz Boston Calendar`, l)),
          'END:VCALENDAR',
          '',
        ].join('\r\n');
      const registry = parseRegistry(
        {
          sources: [
            {
              id: 'jazz',
              url: 'jazz.ics',
              format: 'ical',
              organizer: { name: 'Jazz Weekly', url: 'https://jazz.example' },
              destination: 'san-francisco',
              attribution: 'Jazz Weekly',
            },
          ],
        },
        '(test)',
      );
      const ctx = sourceContext(registry, registry.sources[0]!, g, WINDOW);
      const concord = 'Concord Conservatory of Music, Concord';
      const away = normalizeAll(
        parseICal(feed(['400 Soldiers Field Rd, Boston, MA 02134', '135 Congress St, Portsmouth, NH 03801', '1 Bennett St, Cambridge, MA 02138', concord]), {
          window: WINDOW,
        }).events,
        ctx,
      );
      assert.deepEqual([away.rows.length, away.dropped], [0, { outside_area: 4 }]);
      // The same item in a Bay Area feed is Concord, CA.
      const here = normalizeAll(
        parseICal(feed(['Glen Park Branch Library, 2825 Diamond Street San Francisco, CA 94131', 'Todos Santos Plaza, Concord, CA 94520', concord]), {
          window: WINDOW,
        }).events,
        ctx,
      );
      assert.deepEqual(
        here.rows.map((r) => [r.venue_city, r.venue_geo_precision]),
        [
          ['San Francisco', 'zip'],
          ['Concord', 'zip'],
          ['Concord', 'place'],
        ],
      );
    });
  });

  test('nothing locatable → null (the build falls back to the source default venue)', () => {
    assert.equal(resolveVenue(g, { location: 'Online via Zoom', lat: null, lng: null, organizer: null }), null);
  });
});

describe('a place named only in the title', () => {
  const g = bundledGazetteer();
  test('placeInTitle reads "@ place" and "at Place" at the end of a title, and nothing else', () => {
    assert.equal(placeInTitle('Passion Pit @ Fox Theater - Oakland'), 'Fox Theater - Oakland');
    assert.equal(placeInTitle('Benson Boone @ SAP Center at San Jose'), 'SAP Center at San Jose');
    assert.equal(placeInTitle('Toddler Storytime at Rockridge Branch'), 'Rockridge Branch');
    assert.equal(placeInTitle('Crafts to do at home'), null);
    assert.equal(placeInTitle('Meet at noon for a walk'), null);
    assert.equal(placeInTitle('Storytime'), null);
  });

  test("an item with no place of its own is served where its title says (a show radar's RSS)", () => {
    const vevent = (i: number, title: string): string =>
      ['BEGIN:VEVENT', `UID:t${i}@radar`, `DTSTART:202612${String(1 + i).padStart(2, '0')}T040000Z`, `SUMMARY:${title}`, 'END:VEVENT'].join('\r\n');
    const titles = [
      'Passion Pit @ Fox Theater - Oakland',
      'Benson Boone @ SAP Center at San Jose',
      'Santana @ Shoreline Amphitheatre',
      'The Beths @ Some Club - Walnut Creek',
      'Band @ Somewhere Unknown',
    ];
    const ics = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', ...titles.map((t, i) => vevent(i, t)), 'END:VCALENDAR', ''].join('\r\n');
    const registry = parseRegistry(
      {
        sources: [
          {
            id: 'radar',
            url: 'radar.ics',
            format: 'ical',
            organizer: { name: 'Show Radar', url: 'https://radar.example' },
            destination: 'san-francisco',
            attribution: 'Show Radar',
          },
        ],
      },
      '(test)',
    );
    const out = normalizeAll(parseICal(ics, { window: WINDOW }).events, sourceContext(registry, registry.sources[0]!, g, WINDOW));
    assert.deepEqual(
      out.rows.map((r) => [r.title, r.venue_name, r.venue_city]),
      [
        ['Passion Pit @ Fox Theater - Oakland', 'Fox Theater', 'Oakland'],
        ['Benson Boone @ SAP Center at San Jose', 'SAP Center', 'San Jose'],
        ['Santana @ Shoreline Amphitheatre', 'Shoreline Amphitheatre', 'Mountain View'],
        ['The Beths @ Some Club - Walnut Creek', 'Some Club', 'Walnut Creek'],
      ],
    );
    // A title place nothing locates is no place: without a default venue the item has none.
    assert.deepEqual(out.dropped, { no_location: 1 });
  });
});
