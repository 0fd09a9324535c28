import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bundledGazetteer } from '../../../../workers/snapshot/gazetteer.ts';
import { formatAddress, resolveVenue } from '../../../../workers/snapshot/normalize/venues.ts';

const g = bundledGazetteer();
const ADDRESS = /^[^,]+, [^,]+, CA \d{5}$/;

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
        const got = resolveVenue(g, { location: text, lat: null, lng: null, organizer: v.organizer });
        assert.equal(got?.key, v.key, `${text} → ${got?.key}`);
        assert.equal(formatAddress(got!), `${v.street}, ${v.city}, CA ${v.zip}`);
        assert.match(formatAddress(got!), ADDRESS);
      }
    }
  });

  test('a name several organizers share is settled by the organizer', () => {
    const shared = [...g.venuesByName.entries()].find(([, vs]) => new Set(vs.map((v) => v.organizer)).size > 1);
    if (!shared) return;
    for (const v of shared[1]) assert.equal(resolveVenue(g, { location: shared[0], lat: null, lng: null, organizer: v.organizer })?.key, v.key);
  });

  test('an unknown street in a known city is an ad-hoc venue at the upstream coordinates, else the city centre', () => {
    const oakland = g.cityByName.get('oakland')!;
    const at = resolveVenue(g, { location: 'Lakeside Garden Center, 666 Bellevue Ave, Oakland, CA 94610', lat: 37.8085, lng: -122.2579, organizer: null })!;
    assert.deepEqual([at.name, at.street, at.city, at.zip, at.lat, at.lng], ['Lakeside Garden Center', '666 Bellevue Ave', 'Oakland', '94610', 37.8085, -122.2579]);
    assert.equal(at.destination, oakland.destination);
    const centre = resolveVenue(g, { location: '123 Nowhere St, Oakland, CA', lat: null, lng: null, organizer: null })!;
    assert.deepEqual([centre.lat, centre.lng, formatAddress(centre)], [oakland.lat, oakland.lng, '123 Nowhere St, Oakland, CA']);
  });

  test('city names match case- and accent-insensitively (San José)', () => {
    const v = resolveVenue(g, { location: '1 Somewhere Plaza, San José, CA 95113', lat: null, lng: null, organizer: null });
    assert.equal(v?.city, 'San Jose');
  });

  test('coordinates alone find a known venue within 150 m, and nothing farther', () => {
    const v = g.venues[0]!;
    assert.equal(resolveVenue(g, { location: null, lat: v.lat + 0.0005, lng: v.lng, organizer: null })?.key, v.key);
    assert.equal(resolveVenue(g, { location: null, lat: 36.0, lng: -120.0, organizer: null }), null);
  });

  test('nothing locatable → null (the build falls back to the source default venue)', () => {
    assert.equal(resolveVenue(g, { location: 'Online via Zoom', lat: null, lng: null, organizer: null }), null);
  });
});
