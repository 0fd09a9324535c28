// /v1/events/{id} and /v1/feed.ics: one event by id, metered as one record, with the plan's
// exclusions honoured; the search as an iCalendar feed under the same filters, paging, quota and
// validators as the other formats. Oracles: the snapshot's own rows and the JSON search.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ICAL from 'ical.js';
import { get, provisionKey, sampleFixture, startTestServer, NOW, type Fixture, type TestServer } from './helpers.ts';
import { checkIcs } from './readers.ts';

let fx: Fixture;
let srv: TestServer;

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
});
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
/** Upcoming events the test key's plan holds (it excludes festivals and seasonal, as Community does). */
const upcoming = () => fx.rows.filter((r) => r.end_ms >= NOW.getTime() && !r.categories.includes('festivals') && !r.categories.includes('seasonal'));

describe('GET /v1/events/{id}', () => {
  test('every record of a search page comes back alone, byte for byte the same object, on both hosts', async () => {
    const page = await get(srv.base, '/v1/events?limit=100');
    const t0 = performance.now();
    assert.equal(page.status, 200);
    assert.ok(page.json.events.length > 50);
    for (const record of page.json.events as { id: string }[]) {
      const one = await get(srv.base, `/v1/events/${record.id}`);
      assert.equal(one.status, 200, record.id);
      assert.equal(one.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(one.json, record);
    }
    console.log(`100 lookups: ${Math.round(performance.now() - t0)} ms`);
    const id = (page.json.events[0] as { id: string }).id;
    const twin = await get(srv.base, `/api/v1/events/${id}`);
    assert.deepEqual(twin.json, page.json.events[0]);
  });

  test('an id from an event that has ended is still answered (ids stay resolvable while the data holds them)', async () => {
    const ended = fx.rows.find((r) => r.end_ms < NOW.getTime() && !r.categories.includes('festivals') && !r.categories.includes('seasonal'));
    if (!ended) return;
    const r = await get(srv.base, `/v1/events/${ended.id}`);
    assert.equal(r.status, 200);
    assert.equal(r.json.id, ended.id);
  });

  test('unknown, malformed and excluded ids are 404 problem+json that say what to do', async () => {
    const unknown = await get(srv.base, '/v1/events/bsc_evt_00000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json');
    assert.equal(unknown.json.code, 'not_found');
    assert.match(unknown.json.detail, /bsc_evt_00000000000000000000.*search \/v1\/events/);

    for (const bad of ['nope', 'bsc_evt_XYZ', 'bsc_evt_0000000000000000000g', '%3Cscript%3E', 'bsc_evt_00000000000000000000.json']) {
      const r = await get(srv.base, `/v1/events/${bad}`);
      assert.equal(r.status, 404, bad);
      assert.equal(r.json.code, 'not_found', bad);
      assert.match(r.json.detail, /not an event id/, bad);
    }
    const trailing = await get(srv.base, '/v1/events/');
    assert.equal(trailing.status, 404);

    // The test key's plan excludes festivals and seasonal, as Community does: their events are not there for it.
    const festival = fx.rows.find((r) => r.categories.includes('festivals'));
    assert.ok(festival, 'the sample has festivals');
    const hidden = await get(srv.base, `/v1/events/${festival.id}`);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.json.code, 'not_found');
    const partner = provisionKey(srv.config.ledgerDir, { plan: 'partner' });
    const shown = await get(srv.base, `/v1/events/${festival.id}`, bearer(partner.key));
    assert.equal(shown.status, 200);
    assert.equal(shown.json.id, festival.id);
  });

  test('no key is 401; an unknown query parameter is 400', async () => {
    const id = upcoming()[0]!.id;
    const r = await get(srv.base, `/v1/events/${id}`, { headers: { authorization: '' } });
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'missing_api_key');
    const q = await get(srv.base, `/v1/events/${id}?limit=5`);
    assert.equal(q.status, 400);
    assert.equal(q.json.code, 'unknown_parameter');
  });

  test('metered as one record; a 304 and HEAD charge nothing; the cap holds', async () => {
    const community = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    const ids = upcoming().map((r) => r.id);
    const first = await get(srv.base, `/v1/events/${ids[0]}`, bearer(community.key));
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-quota-remaining'), '24');
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await get(srv.base, `/v1/events/${ids[0]}`, { headers: { authorization: `Bearer ${community.key}`, 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const head = await fetch(`${srv.base}/v1/events/${ids[0]}`, { method: 'HEAD', headers: { authorization: `Bearer ${community.key}` } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('etag'), etag);
    assert.equal(head.headers.get('x-quota-remaining'), '24');
    for (let i = 1; i < 25; i++) assert.equal((await get(srv.base, `/v1/events/${ids[i]}`, bearer(community.key))).status, 200);
    const over = await get(srv.base, `/v1/events/${ids[25]}`, bearer(community.key));
    assert.equal(over.status, 429);
    assert.equal(over.json.code, 'quota_exhausted');
    const usage = await get(srv.base, `/v1/usage?api_key=${community.key}`);
    assert.equal(usage.json.records.used, 25);
  });

  test('ETag is strong, the same on each call; gzip when asked', async () => {
    const id = upcoming()[0]!.id;
    const a = await get(srv.base, `/v1/events/${id}`);
    const b = await get(srv.base, `/v1/events/${id}`);
    assert.equal(a.headers.get('etag'), b.headers.get('etag'));
    assert.match(a.headers.get('etag') ?? '', /^"[^"]+"$/);
    assert.equal(a.headers.get('cache-control'), 'private, max-age=60');
  });
});

describe('GET /v1/feed.ics', () => {
  test('the same events, in the same order, as the JSON search of the same query, read by ical.js', async () => {
    for (const query of ['city=Berkeley&limit=50', 'age_min=3&age_max=5&week=next', 'category=storytime&offset=10&limit=20']) {
      const json = await get(srv.base, `/v1/events?${query}`);
      const ics = await get(srv.base, `/v1/feed.ics?${query}`);
      assert.equal(ics.status, 200, query);
      assert.equal(ics.headers.get('content-type'), 'text/calendar; charset=utf-8');
      assert.equal(ics.headers.get('x-total-count'), String(json.json.total));
      const events = checkIcs(ics.text, query);
      const records = json.json.events as { id: string; title: string; start_datetime: string; is_canceled: boolean; event_url: string }[];
      assert.deepEqual(
        events.map((e) => e.getFirstPropertyValue('uid')),
        records.map((r) => r.id),
        query,
      );
      const cal = new ICAL.Component(ICAL.parse(ics.text) as unknown[]);
      for (const z of cal.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(new ICAL.Timezone(z));
      events.forEach((e, i) => {
        const r = records[i]!;
        const ev = new ICAL.Event(e);
        assert.equal(ev.summary, r.title);
        assert.equal(ev.startDate.toJSDate().getTime(), Date.parse(r.start_datetime), r.id);
        assert.equal(String(e.getFirstPropertyValue('url')), r.event_url);
        assert.equal(String(e.getFirstPropertyValue('status')), r.is_canceled ? 'CANCELLED' : 'CONFIRMED');
      });
      if (json.json.next_offset !== null) assert.match(ics.headers.get('link') ?? '', /rel="next"/);
      assert.ok(!ics.text.includes('api_key'), 'no key in the calendar body');
    }
  });

  test('quota: every event counts one; 304 counts nothing; community exclusions are 403', async () => {
    const community = provisionKey(srv.config.ledgerDir, { plan: 'community' });
    const first = await get(srv.base, '/v1/feed.ics?city=Berkeley&limit=5', bearer(community.key));
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-quota-remaining'), '20');
    const again = await get(srv.base, '/v1/feed.ics?city=Berkeley&limit=5', {
      headers: { authorization: `Bearer ${community.key}`, 'if-none-match': first.headers.get('etag') ?? '' },
    });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('x-quota-remaining'), '20');
    const refused = await get(srv.base, '/v1/feed.ics?category=festivals', bearer(community.key));
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'category_not_in_plan');
  });

  test('a key in the subscribed URL (calendar apps cannot send headers) never appears in the body', async () => {
    const r = await get(srv.base, `/v1/feed.ics?city=Oakland&api_key=${srv.key}`, { headers: { authorization: '' } });
    assert.equal(r.status, 200);
    assert.ok(!r.text.includes(srv.key));
    assert.ok(!r.text.includes('api_key'));
  });
});

test('an empty calendar is still a calendar: ical.js reads it, with no events', async () => {
  const r = await get(srv.base, '/v1/feed.ics?q=zzzzqqqq');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-total-count'), '0');
  assert.deepEqual(checkIcs(r.text, 'empty'), []);
});
