// The website's "When" and "Near" (issue 28, item 4) over real HTTP: when=today, tomorrow and
// weekend list exactly the events an oracle computes from the snapshot's rows at a pinned clock (a
// Saturday, a Sunday and a Wednesday), nothing already ended on a day under way; near takes a Bay
// Area ZIP code or a city or town, the distance is in miles (the API's radius_km), results come
// nearest first with "mi away"; an unknown place is a 400 page saying what to type; the same
// search's calendar link (/events.ics) honours when. Links with lat/lng/radius_km keep working.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../../../core/config.ts';
import { get, sampleFixture, startTestServer, type Fixture, type OracleRow, type TestServer } from '../helpers.ts';

const LA = 'America/Los_Angeles';
const EXCLUDED = ['seasonal', 'festivals'];
const KM_PER_MILE = 1.609344;

/**
 * The three clocks: Saturday noon of the fixture's weekend (its morning's events have ended), the
 * Sunday after, and a Wednesday. The sample's Sundays hold only seasonal events, which the website's
 * plan leaves out: on Sunday, today and the rest of the weekend are rightly empty.
 */
const CLOCKS = {
  saturday: new Date('2026-11-21T12:15:00-08:00'),
  sunday: new Date('2026-11-22T14:30:00-08:00'),
  wednesday: new Date('2026-11-25T10:00:00-08:00'),
} as const;
type Clock = keyof typeof CLOCKS;

// ---------------------------------------------------------------- the oracle

/** A Pacific day's first and last ms, `plus` days after `now`'s day. */
function laDay(now: Date, plus: number): { from: number; to: number } {
  const d = DateTime.fromJSDate(now, { zone: LA }).plus({ days: plus }).startOf('day');
  return { from: d.toMillis(), to: d.plus({ days: 1 }).toMillis() - 1 };
}

/** today, tomorrow, the weekend (Saturday and Sunday; this one when it is one), never what has ended. */
function whenRange(when: string, now: Date): { from: number; to: number } {
  const dow = DateTime.fromJSDate(now, { zone: LA }).weekday; // 1 Monday … 7 Sunday
  const t = now.getTime();
  if (when === 'today') return { ...laDay(now, 0), from: Math.max(laDay(now, 0).from, t) };
  if (when === 'tomorrow') return laDay(now, 1);
  assert.equal(when, 'weekend');
  const toSaturday = dow === 7 ? -1 : 6 - dow;
  return { from: Math.max(laDay(now, toSaturday).from, t), to: laDay(now, toSaturday + 1).to };
}

function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

let rows: readonly OracleRow[];

function expected(o: { when?: string; now?: Date; near?: { lat: number; lng: number; km: number } }): string[] {
  const now = o.now ?? CLOCKS.saturday;
  const range = o.when === undefined ? { from: now.getTime(), to: Infinity } : whenRange(o.when, now);
  return rows
    .filter((r) => !r.categories.some((c) => EXCLUDED.includes(c)))
    .filter((r) => r.start_ms <= range.to && r.end_ms >= range.from)
    .filter((r) => o.near === undefined || haversineKm(o.near.lat, o.near.lng, r.venue_lat, r.venue_lng) <= o.near.km)
    .map((r) => r.id)
    .sort();
}

// ---------------------------------------------------------------- the website

const servers = new Map<Clock, TestServer>();
let fx: Fixture;

const bayZips = new Map(
  (JSON.parse(readFileSync(path.join(REPO_ROOT, 'sources', 'bayarea.json'), 'utf8')) as { zips: [string, string, string, number, number][] }).zips.map(
    ([zip, , , lat, lng]) => [zip, { lat, lng }],
  ),
);
const berkeley = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'sources', 'gazetteer.json'), 'utf8')) as { cities: { name: string; lat: number; lng: number }[] }
).cities.find((c) => c.name === 'Berkeley')!;

before(async () => {
  fx = await sampleFixture();
  rows = fx.rows;
  for (const [name, at] of Object.entries(CLOCKS) as [Clock, Date][])
    servers.set(
      name,
      await startTestServer(fx.dataDir, { FAMILY_EVENTS_NOW: at.toISOString(), WEB_LISTINGS_PER_MINUTE: '100000', WEB_CALENDARS_PER_MINUTE: '1000' }),
    );
});

after(async () => {
  for (const s of servers.values()) await s.stop();
  await fx?.cleanup();
});

const CARD = /<li class="card">[\s\S]*?<\/li>/g;
const decode = (s: string): string =>
  s.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>');

interface Listed {
  readonly ids: string[];
  /** Each card's "… mi away", in page order (null when a card has none). */
  readonly miles: (number | null)[];
  readonly first: string;
}

/** Every event a listing holds, page after page (50 a page), from the cards' links. */
async function listed(clock: Clock, query: string): Promise<Listed> {
  const srv = servers.get(clock)!;
  const ids: string[] = [];
  const miles: (number | null)[] = [];
  let first = '';
  for (let offset = 0; ; offset += 50) {
    const r = await get(srv.base, `/events?${query}&limit=50${offset ? `&offset=${offset}` : ''}`);
    assert.equal(r.status, 200, `${query}: ${r.text.slice(0, 500)}`);
    if (offset === 0) first = r.text;
    const cards = r.text.match(CARD) ?? [];
    for (const c of cards) {
      ids.push(decodeURIComponent(decode(/href="\/events\/([^"]+)"/.exec(c)![1]!)));
      const m = / · ([0-9.]+) mi away/.exec(c);
      miles.push(m ? Number(m[1]) : null);
    }
    if (!r.text.includes('rel="next"')) break;
  }
  return { ids, miles, first };
}

const nonTrivial = (ids: readonly string[], what: string): void => {
  assert.ok(ids.length > 0, `${what}: the sample has events to find`);
  assert.ok(ids.length < rows.length / 2, `${what}: not everything`);
};

describe('when', () => {
  for (const clock of ['saturday', 'sunday', 'wednesday'] as const) {
    for (const when of ['today', 'tomorrow', 'weekend'] as const) {
      test(`when=${when} on ${clock}`, async () => {
        const exp = expected({ when, now: CLOCKS[clock] });
        const onSunday = clock === 'sunday' ? when !== 'tomorrow' : clock === 'saturday' && when === 'tomorrow';
        if (onSunday) assert.equal(exp.length, 0, 'the sample’s Sundays hold only what the plan leaves out');
        else nonTrivial(exp, `${when} on ${clock}`);
        const got = await listed(clock, `when=${when}`);
        assert.deepEqual([...got.ids].sort(), exp);
        if (exp.length === 0) assert.ok(got.first.includes('No events match this search'));
        assert.ok(got.first.includes(`<option value="${when}" selected>`), 'the form shows the choice');
      });
    }
  }

  test('a day under way lists nothing that has ended: Saturday noon, and Sunday for the weekend', () => {
    for (const [clock, when] of [
      ['saturday', 'today'],
      ['sunday', 'weekend'],
    ] as const) {
      const now = CLOCKS[clock].getTime();
      // The whole of today, or the whole weekend (from Saturday 00:00).
      const wholeDays = { from: laDay(CLOCKS[clock], clock === 'sunday' ? -1 : 0).from, to: laDay(CLOCKS[clock], 0).to };
      const ended = rows.filter(
        (r) => !r.categories.some((c) => EXCLUDED.includes(c)) && r.start_ms <= wholeDays.to && r.end_ms >= wholeDays.from && r.end_ms < now,
      );
      assert.ok(ended.length > 0, `${clock}: the sample has ${when} events that ended before now (the case that matters)`);
      const exp = new Set(expected({ when, now: CLOCKS[clock] }));
      for (const r of ended) assert.ok(!exp.has(r.id));
    }
  });

  test('This week and Next week are week=current and week=next', async () => {
    for (const [when, week] of [
      ['week', 'current'],
      ['next-week', 'next'],
    ]) {
      const a = await listed('wednesday', `when=${when}`);
      const b = await listed('wednesday', `week=${week}`);
      assert.deepEqual(a.ids, b.ids, when);
      assert.ok(a.ids.length > 0);
    }
  });

  test('a preset with dates, or an unknown when, is a 400 page saying what to change', async () => {
    const srv = servers.get('saturday')!;
    const both = await get(srv.base, '/events?when=today&start_date=2026-11-30');
    assert.equal(both.status, 400);
    assert.ok(both.text.includes('choose Specific dates'), both.text);
    const odd = await get(srv.base, '/events?when=someday');
    assert.equal(odd.status, 400);
    assert.ok(odd.text.includes('Today, Tomorrow, This weekend'));
    // A link's week (a hidden field on the form) gives way to the period chosen.
    const over = await listed('saturday', 'when=weekend&week=2026-W50');
    assert.deepEqual([...over.ids].sort(), expected({ when: 'weekend' }));
    // Specific dates is the From and To dates, as before.
    const dates = await listed('saturday', 'when=dates&start_date=2026-11-28&end_date=2026-11-28');
    const plain = await listed('saturday', 'start_date=2026-11-28&end_date=2026-11-28');
    assert.deepEqual(dates.ids, plain.ids);
  });

  test('the page links a calendar of the same search, and /events.ics honours when', async () => {
    const page = await get(servers.get('wednesday')!.base, '/events?when=tomorrow');
    const ics = /href="https:\/\/web\.example(\/events\.ics\?[^"]*)"/.exec(page.text);
    assert.ok(ics, 'a .ics link');
    const href = decode(ics[1]!);
    assert.ok(href.includes('when=tomorrow'), href);
    const cal = await get(servers.get('wednesday')!.base, href);
    assert.equal(cal.status, 200);
    const uids = [...cal.text.matchAll(/^UID:(.+)$/gm)].map((m) => m[1]!.trim());
    const exp = expected({ when: 'tomorrow', now: CLOCKS.wednesday });
    assert.equal(uids.length, Math.min(20, exp.length));
    for (const u of uids) assert.ok(exp.includes(u), `${u} is tomorrow's`);
    const weekend = await get(servers.get('saturday')!.base, '/events.ics?when=weekend&limit=50');
    const w = [...weekend.text.matchAll(/^UID:(.+)$/gm)].map((m) => m[1]!.trim());
    const wexp = expected({ when: 'weekend' });
    assert.equal(w.length, Math.min(50, wexp.length));
    for (const u of w) assert.ok(wexp.includes(u), `${u} is this weekend's`);
  });
});

describe('near', () => {
  test('a ZIP code, in miles, nearest first, "mi away" on every card', async () => {
    const at = bayZips.get('94704')!;
    for (const [miles, km] of [
      ['3', 3 * KM_PER_MILE],
      ['', 10 * KM_PER_MILE],
      ['25', 25 * KM_PER_MILE],
    ] as const) {
      const got = await listed('saturday', `near=94704${miles ? `&miles=${miles}` : ''}`);
      const exp = expected({ near: { ...at, km } });
      assert.ok(exp.length > 0, `${miles} mi`);
      assert.deepEqual([...got.ids].sort(), exp, `${miles || 'default 10'} mi is ${km} km`);
      assert.ok(
        got.miles.every((m) => m !== null && m <= km / KM_PER_MILE + 0.05),
        `every card says how far in miles: ${got.miles.slice(0, 5).join(', ')}`,
      );
      for (let i = 1; i < got.miles.length; i++) assert.ok(got.miles[i]! >= got.miles[i - 1]!, 'nearest first');
      assert.ok(!/ km away/.test(got.first), 'no km on the page');
      assert.ok(got.first.includes('94704 (Berkeley)'), 'the page says where from');
    }
    // 3 mi is fewer than 25 mi: the distance changes the search.
    assert.ok(expected({ near: { ...at, km: 3 * KM_PER_MILE } }).length < expected({ near: { ...at, km: 25 * KM_PER_MILE } }).length);
  });

  test('a city or town by name, in any case, with or without ", CA"', async () => {
    const exp = expected({ near: { lat: berkeley.lat, lng: berkeley.lng, km: 5 * KM_PER_MILE } });
    for (const name of ['Berkeley', 'berkeley', 'Berkeley, CA']) {
      const got = await listed('saturday', `near=${encodeURIComponent(name)}&miles=5`);
      assert.deepEqual([...got.ids].sort(), exp, name);
    }
  });

  test('when and near together: this weekend within 10 mi of 94110', async () => {
    const at = bayZips.get('94110')!;
    const exp = expected({ when: 'weekend', near: { ...at, km: 10 * KM_PER_MILE } });
    nonTrivial(exp, 'weekend near 94110');
    const got = await listed('saturday', 'when=weekend&near=94110&miles=10');
    assert.deepEqual([...got.ids].sort(), exp);
  });

  test('an unknown ZIP or place is a 400 page that says what to type', async () => {
    const srv = servers.get('saturday')!;
    for (const [near, says] of [
      ['99999', '99999 is not a Bay Area ZIP code we know.'],
      ['90210', '90210 is Beverly Hills, outside the nine Bay Area counties'],
      ['Berkly', 'Did you mean Berkeley?'],
      ['Atlantis', 'We do not know a Bay Area city or town called “Atlantis”.'],
    ] as const) {
      const r = await get(srv.base, `/events?near=${near}`);
      assert.equal(r.status, 400, near);
      assert.ok(r.text.includes(says), `${near}: ${says}`);
      assert.ok(r.text.includes('Type a Bay Area ZIP code such as 94110, or a city or town such as Berkeley.'), near);
      assert.ok(r.text.includes('href="#f-near"'), `${near}: the summary links the field`);
      assert.ok(/<input id="f-near"[^>]*aria-invalid="true"/.test(r.text), `${near}: the field is marked`);
    }
    const far = await get(srv.base, '/events?near=94704&miles=9000');
    assert.equal(far.status, 400);
    assert.ok(far.text.includes('choose a distance in miles'));
  });

  test('a link with lat, lng and radius_km still works, shown in miles', async () => {
    const got = await listed('saturday', 'lat=37.8716&lng=-122.2727&radius_km=8');
    assert.deepEqual([...got.ids].sort(), expected({ near: { lat: 37.8716, lng: -122.2727, km: 8 } }));
    assert.ok(got.miles.every((m) => m !== null));
    assert.ok(got.first.includes('<option value="5" selected>5 mi</option>'), '8 km shows as 5 mi');
    assert.ok(got.first.includes('name="lat" value="37.8716"'), 'the point is kept for the next search');
    // A link's bad point is said at the place field, which has no latitude of its own to point at.
    const bad = await get(servers.get('saturday')!.base, '/events?lat=100&lng=-122.2727');
    assert.equal(bad.status, 400);
    assert.ok(bad.text.includes('The link’s latitude must be a number'), bad.text);
    assert.ok(bad.text.includes('href="#f-near"'));
    // Without a radius: the website's 10 miles.
    const plain = await listed('saturday', 'lat=37.8716&lng=-122.2727');
    assert.deepEqual([...plain.ids].sort(), expected({ near: { lat: 37.8716, lng: -122.2727, km: 10 * KM_PER_MILE } }));
  });
});
