// The iCalendar body read back by ical.js (a parser we did not write), with the body's own VTIMEZONE:
// every event says what its record says (instants included, across both DST changes), upstream text
// of any kind reads back as itself after the documented cleaning, the body is well-formed line by
// line (CRLF, ≤ 75 octets, whole UTF-8 sequences), and equal input gives equal bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { ICS_CONTENT_TYPE, icsBody } from '../../query/ical.ts';
import type { CalendarInfo } from '../../query/protocol.ts';
import type { EventRecord } from '../../core/record.ts';

const BUDGET_MS = 3000;
const WEB = 'https://web.example';
const ZONE = 'America/Los_Angeles';
const CAL: CalendarInfo = {
  name: 'Family events: Oakland, free; ages 3–5',
  url: 'https://api.example/v1/feed.ics?city=oakland',
  stamp: '2026-07-01T12:34:56Z',
};

// ical.js reads unknown x-properties raw; these two are TEXT.
for (const name of ['x-wr-calname', 'x-wr-timezone']) (ICAL.design.icalendar.property as Record<string, unknown>)[name] = { defaultType: 'text' };

function record(over: Partial<EventRecord> = {}): EventRecord {
  const id = over.id ?? 'bsc_evt_0123456789abcdef0123';
  return {
    id,
    title: 'Preschool Storytime',
    description: 'Picture books, songs & a simple craft.',
    summary: 'Picture books and songs.',
    start_datetime: '2026-11-28T10:00:00-08:00',
    end_datetime: '2026-11-28T10:45:00-08:00',
    venue: { name: 'Main Library', address: '125 14th St, Oakland, CA 94612', city: 'Oakland', lat: 37.801, lng: -122.2635, geo_precision: 'venue' },
    organizer: 'Oakland Public Library',
    organizer_url: 'https://oaklandlibrary.example',
    categories: ['storytime', 'books'],
    tags: ['preschool'],
    image_url: null,
    is_free: true,
    price: null,
    ticket_url: null,
    source: 'oaklandlibrary.example',
    source_url: null,
    destination: 'sf-bay-area',
    age_range: { min_months: 36, max_months: 71 },
    age_range_years: { min_years: 3, max_years: 5 },
    is_canceled: false,
    all_day: false,
    created_at: '2026-11-01T09:00:00.000-07:00',
    updated_at: '2026-11-02T09:00:00.000-08:00',
    event_url: `${WEB}/events/${id}`,
    ...over,
  };
}

/** The cleaning icsBody documents, written independently: UTF-8 round trip, LF line breaks, no C0 but TAB/LF, no DEL. */
function documented(s: string): string {
  const wellFormed = new TextDecoder().decode(new TextEncoder().encode(s));
  // eslint-disable-next-line no-control-regex -- the characters the body may not carry
  return wellFormed.replace(/\r\n|\r/g, '\n').replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, '');
}

/** Physical lines: CRLF only, each ≤ 75 octets and whole UTF-8, no other controls but HTAB. */
function assertWellFormed(body: Buffer): void {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  assert.ok(text.endsWith('\r\n'), 'the last line ends in CRLF');
  const lines = text.slice(0, -2).split('\r\n');
  for (const line of lines) {
    const bytes = Buffer.from(line);
    assert.ok(bytes.length <= 75, `line of ${bytes.length} octets: ${JSON.stringify(line)}`);
    assert.doesNotThrow(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes), 'a fold split a UTF-8 sequence');
    // eslint-disable-next-line no-control-regex -- the characters a content line may not carry
    assert.doesNotMatch(line, /[\u0000-\u0008\n\v\f\r\u000E-\u001F\u007F]/, `control character in ${JSON.stringify(line)}`);
  }
}

/** The body as ical.js reads it, its TZIDs resolved by the body's own VTIMEZONE (and nothing else). */
function parse(body: Buffer): { cal: ICAL.Component; events: Map<string, ICAL.Component> } {
  assertWellFormed(body);
  ICAL.TimezoneService.reset();
  const cal = new ICAL.Component(ICAL.parse(body.toString('utf8')) as unknown[]);
  for (const tz of cal.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(tz);
  const events = new Map<string, ICAL.Component>();
  for (const ve of cal.getAllSubcomponents('vevent')) {
    const uid = String(ve.getFirstPropertyValue('uid'));
    assert.ok(!events.has(uid), `UID ${uid} twice`);
    events.set(uid, ve);
  }
  return { cal, events };
}

const text = (c: ICAL.Component, name: string): unknown => c.getFirstPropertyValue(name);

function instant(t: ICAL.Time): number {
  // A TZID ical.js could not resolve reads as floating (the process's local time): never acceptable.
  assert.ok(t.zone === ICAL.Timezone.utcTimezone || t.zone?.tzid === ZONE, `time ${t.toString()} in zone ${t.zone?.tzid}`);
  return t.toJSDate().getTime();
}

/** What every VEVENT must say of its record. */
function assertEvent(ve: ICAL.Component, r: EventRecord): void {
  const ev = new ICAL.Event(ve);
  assert.equal(ev.uid, r.id);
  assert.equal(ev.summary, documented(r.title));
  assert.equal(text(ve, 'status'), r.is_canceled ? 'CANCELLED' : 'CONFIRMED');
  assert.equal(instant(ev.startDate), Date.parse(r.start_datetime), `DTSTART of ${r.start_datetime}`);
  const end = r.end_datetime === null ? null : Date.parse(r.end_datetime);
  if (end !== null && end > Date.parse(r.start_datetime)) {
    assert.equal(instant(ev.endDate), end, `DTEND of ${r.end_datetime}`);
  } else {
    assert.equal(ve.getFirstProperty('dtend'), null, 'no DTEND without a later end');
    assert.equal(instant(ev.endDate), Date.parse(r.start_datetime), 'ends at its start (RFC 5545 3.6.1)');
  }
  assert.equal(ve.getFirstProperty('duration'), null);
  assert.equal(text(ve, 'url'), r.event_url);
  const location = [r.venue.name, r.venue.address]
    .map(documented)
    .filter((s) => s !== '')
    .join(', ');
  assert.equal(ev.location || null, location || null);
  assert.deepEqual(text(ve, 'geo'), [r.venue.lat, r.venue.lng]);
  assert.deepEqual(
    ve.getFirstProperty('categories')?.getValues() ?? [],
    r.categories.map(documented).filter((s) => s !== ''),
  );
  assert.equal(String(text(ve, 'dtstamp')), DateTime.fromISO(CAL.stamp, { zone: 'utc' }).toISO({ suppressMilliseconds: true }));
  assert.equal(text(ve, 'sequence'), 0);
  assert.equal(ve.getFirstProperty('organizer'), null, 'no ORGANIZER without an e-mail address');
  for (const p of ve.getAllProperties()) assert.ok(!p.name.startsWith('x-'), `x-property ${p.name}`);
}

test('a calendar says what it is and how often to poll it', () => {
  const r = record();
  const { cal, events } = parse(icsBody([r], CAL));
  assert.equal(ICS_CONTENT_TYPE, 'text/calendar; charset=utf-8');
  assert.equal(cal.name, 'vcalendar');
  assert.equal(text(cal, 'version'), '2.0');
  assert.equal(text(cal, 'prodid'), '-//Family Events API//v1//EN');
  assert.equal(text(cal, 'method'), 'PUBLISH');
  assert.equal(text(cal, 'x-wr-calname'), CAL.name);
  assert.equal(text(cal, 'url'), CAL.url);
  assert.equal(text(cal, 'x-wr-timezone'), ZONE);
  assert.equal(String(text(cal, 'refresh-interval')), 'PT1H');
  assert.equal(cal.getFirstProperty('refresh-interval')?.type, 'duration');
  assert.equal(String(text(cal, 'x-published-ttl')), 'PT1H');
  assert.deepEqual(
    cal.getAllSubcomponents('vtimezone').map((tz) => tz.getFirstPropertyValue('tzid')),
    [ZONE],
  );
  assert.equal(events.size, 1);
  assertEvent(events.get(r.id)!, r);
  const description = text(events.get(r.id)!, 'description');
  assert.equal(description, `${r.description}\n\nAges 3–5 · Free\n\n${r.event_url}`);
});

test('times carry TZID=America/Los_Angeles at local wall time, and mean the right instant across DST', () => {
  const cases: [string, string | null][] = [
    ['2026-03-08T01:30:00-08:00', '2026-03-08T03:30:00-07:00'], // the night the clocks go forward
    ['2026-03-08T10:00:00-07:00', '2026-03-08T11:00:00-07:00'],
    ['2026-11-01T01:30:00-07:00', '2026-11-01T01:45:00-07:00'], // the first 01:30 of the night they go back
    ['2026-11-01T01:30:00-08:00', '2026-11-01T02:30:00-08:00'], // the second 01:30
    ['2026-11-01T10:00:00-08:00', null],
    ['2026-06-15T18:00:00-07:00', '2026-06-15T18:00:00-07:00'], // an end equal to the start is no DTEND
  ];
  const records = cases.map(([start, end], i) => record({ id: `bsc_evt_dst${i}`, start_datetime: start, end_datetime: end }));
  const body = icsBody(records, CAL);
  const { events } = parse(body);
  for (const r of records) assertEvent(events.get(r.id)!, r);

  const lines = body.toString('utf8').split('\r\n');
  const linesOf = (id: string): string[] => {
    const from = lines.indexOf(`UID:${id}`);
    return lines.slice(from, lines.indexOf('END:VEVENT', from));
  };
  assert.ok(linesOf('bsc_evt_dst0').includes('DTSTART;TZID=America/Los_Angeles:20260308T013000'));
  assert.ok(linesOf('bsc_evt_dst0').includes('DTEND;TZID=America/Los_Angeles:20260308T033000'));
  assert.ok(linesOf('bsc_evt_dst1').includes('DTSTART;TZID=America/Los_Angeles:20260308T100000'));
  // The hour the clocks repeat goes in UTC, both passes of it: a TZID time there is ambiguous.
  assert.ok(linesOf('bsc_evt_dst2').includes('DTSTART:20261101T083000Z'));
  assert.ok(linesOf('bsc_evt_dst2').includes('DTEND:20261101T084500Z'));
  assert.ok(linesOf('bsc_evt_dst3').includes('DTSTART:20261101T093000Z'));
  assert.ok(linesOf('bsc_evt_dst3').includes('DTEND:20261101T103000Z'));
  assert.ok(linesOf('bsc_evt_dst4').includes('DTSTART;TZID=America/Los_Angeles:20261101T100000'));
  assert.ok(!linesOf('bsc_evt_dst4').some((l) => l.startsWith('DTEND')));
  assert.ok(!linesOf('bsc_evt_dst5').some((l) => l.startsWith('DTEND')));
});

test('why the repeated hour is not written with TZID: readers disagree on which 01:30 it means', () => {
  parse(icsBody([record()], CAL));
  const la = ICAL.TimezoneService.get(ZONE);
  const wall = ICAL.Time.fromData({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, la);
  // RFC 5545 3.3.5 says the first occurrence (PDT, 08:30Z); ical.js, like libical, takes the second.
  assert.notEqual(wall.toJSDate().getTime(), Date.parse('2026-11-01T01:30:00-07:00'));
});

test('the body does not depend on the process time zone or the clock', () => {
  const records = [
    record({ id: 'bsc_evt_a', start_datetime: '2026-11-01T01:30:00-07:00', end_datetime: '2026-11-01T03:00:00-08:00' }),
    record({ id: 'bsc_evt_b' }),
  ];
  const saved = process.env.TZ;
  try {
    process.env.TZ = 'Asia/Tokyo';
    const tokyo = icsBody(records, CAL);
    process.env.TZ = 'UTC';
    const utc = icsBody(structuredClone(records), { ...CAL });
    assert.ok(tokyo.equals(utc));
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('markup and quotes in upstream text read back as that exact text', () => {
  const r = record({
    title: '"><script>alert(1)</script>',
    description: 'Bring "snacks" & \'water\'</script><img src=x onerror=alert(1)>; 1,2,3 \\o/',
    venue: { name: 'The "Big" Room</script>', address: '1 Main St, Oakland, CA 94612', city: 'Oakland', lat: 37.8, lng: -122.27, geo_precision: 'venue' },
  });
  const { events } = parse(icsBody([r], CAL));
  const ve = events.get(r.id)!;
  assertEvent(ve, r);
  assert.equal(text(ve, 'summary'), '"><script>alert(1)</script>');
  assert.ok(String(text(ve, 'description')).startsWith(`${r.description}\n\n`));
  assert.equal(text(ve, 'location'), 'The "Big" Room</script>, 1 Main St, Oakland, CA 94612');
});

test('a canceled event is STATUS:CANCELLED, its title unchanged, and its description says so first', () => {
  const r = record({ is_canceled: true, is_free: false, price: { min: 10, max: 15, note: 'members $10' }, age_range_years: null });
  const { events } = parse(icsBody([r], CAL));
  const ve = events.get(r.id)!;
  assertEvent(ve, r);
  assert.equal(text(ve, 'status'), 'CANCELLED');
  assert.equal(text(ve, 'summary'), r.title);
  assert.equal(text(ve, 'description'), `This event is canceled.\n\n${r.description}\n\n$10–$15 (members $10)\n\n${r.event_url}`);
});

test('an all-day event is DATE values: DTSTART its first Pacific day, DTEND the day after its last (RFC 5545 3.6.1)', () => {
  // [start_datetime, end_datetime, first day, exclusive end day], as the pipeline writes all-day records.
  const cases: [string, string | null, string, string][] = [
    ['2026-11-21T00:00:00-08:00', '2026-11-21T23:59:59-08:00', '2026-11-21', '2026-11-22'],
    ['2026-11-21T00:00:00-08:00', null, '2026-11-21', '2026-11-22'], // no end: the one day
    ['2026-03-07T00:00:00-08:00', '2026-03-08T23:59:59-07:00', '2026-03-07', '2026-03-09'], // a weekend across spring-forward
    ['2026-10-31T00:00:00-07:00', '2026-11-01T23:59:59-08:00', '2026-10-31', '2026-11-02'], // and across fall-back
    ['2026-12-30T00:00:00-08:00', '2027-01-02T23:59:59-08:00', '2026-12-30', '2027-01-03'], // four days into the next year
  ];
  const records = cases.map(([start, end], i) => record({ id: `bsc_evt_allday${i}`, start_datetime: start, end_datetime: end, all_day: true }));
  const body = icsBody(records, CAL);
  const { events } = parse(body);
  const lines = body.toString('utf8').split('\r\n');
  for (const [i, [, , first, after]] of cases.entries()) {
    const r = records[i]!;
    const ve = events.get(r.id)!;
    const ev = new ICAL.Event(ve);
    // ical.js (a third-party reader) sees dates, not times: no zone, no clock.
    assert.equal(ev.startDate.isDate, true, `${r.id}: DTSTART is a DATE`);
    assert.equal(ev.endDate.isDate, true, `${r.id}: DTEND is a DATE`);
    assert.equal(ev.startDate.toString(), first);
    assert.equal(ev.endDate.toString(), after);
    assert.equal(ve.getFirstProperty('dtstart')?.type, 'date');
    assert.equal(ve.getFirstProperty('dtend')?.type, 'date');
    const from = lines.indexOf(`UID:${r.id}`);
    const own = lines.slice(from, lines.indexOf('END:VEVENT', from));
    assert.ok(own.includes(`DTSTART;VALUE=DATE:${first.replaceAll('-', '')}`), own.join('\n'));
    assert.ok(own.includes(`DTEND;VALUE=DATE:${after.replaceAll('-', '')}`), own.join('\n'));
    assert.equal(ev.uid, r.id);
    assert.equal(ev.summary, r.title);
  }
  // A timed record with the same midnight-to-23:59:59 times stays a DATE-TIME event: the flag decides.
  const timed = record({ id: 'bsc_evt_timed', start_datetime: '2026-11-21T00:00:00-08:00', end_datetime: '2026-11-21T23:59:59-08:00' });
  const ve = parse(icsBody([timed], CAL)).events.get(timed.id)!;
  assert.equal(new ICAL.Event(ve).startDate.isDate, false);
  assertEvent(ve, timed);
});

test('all-day dates do not depend on the process time zone', () => {
  const r = record({ start_datetime: '2026-11-21T00:00:00-08:00', end_datetime: '2026-11-22T23:59:59-08:00', all_day: true });
  const saved = process.env.TZ;
  try {
    const bodies = ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'UTC'].map((tz) => {
      process.env.TZ = tz;
      return icsBody([structuredClone(r)], CAL);
    });
    assert.ok(bodies.every((b) => b.equals(bodies[0]!)));
    assert.ok(bodies[0]!.toString('utf8').includes('DTSTART;VALUE=DATE:20261121\r\nDTEND;VALUE=DATE:20261123\r\n'));
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
});

test('no events: a valid calendar with no VEVENT and no VTIMEZONE', () => {
  const { cal, events } = parse(icsBody([], CAL));
  assert.equal(events.size, 0);
  assert.equal(cal.getAllSubcomponents().length, 0);
});

/** Any UTF-16 text: controls, CR/LF, lone surrogates, iCalendar delimiters, markup, emoji. */
const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 70, maxLength: 400 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'a,b;c\\d:e',
      'x\r\ny\rz\n',
      '\t tab\t',
      '\u0000\u0001\u001f\u007f',
      '\uD800',
      'x\uDC00y',
      '👪'.repeat(40),
      'é'.repeat(80),
      '</script>"\'',
      ' lead and trail ',
      '\\n\\N\\,',
    ),
  },
);

// Instants of 2026, and the hours around both DST changes, at whole seconds (as records carry them).
const JAN_2026 = Date.UTC(2026, 0, 1) / 1000;
const startSeconds = fc.oneof(
  fc.integer({ min: JAN_2026, max: JAN_2026 + 365 * 86400 }),
  fc.integer({ min: Date.UTC(2026, 2, 8, 8) / 1000, max: Date.UTC(2026, 2, 8, 12) / 1000 }),
  fc.integer({ min: Date.UTC(2026, 10, 1, 7) / 1000, max: Date.UTC(2026, 10, 1, 11) / 1000 }),
);
const isoLocal = (seconds: number): string => DateTime.fromSeconds(seconds, { zone: ZONE }).toISO({ suppressMilliseconds: true })!;

const recordArb = fc.record({
  title: anyText,
  description: fc.option(anyText),
  summary: fc.option(anyText),
  name: anyText,
  address: anyText,
  categories: fc.array(anyText, { maxLength: 4 }),
  start: startSeconds,
  minutes: fc.option(fc.integer({ min: 0, max: 600 })),
  canceled: fc.boolean(),
});

test('property: any upstream text gives a valid, deterministic body that reads back as the cleaned text', () => {
  let runs = 0;
  fc.assert(
    fc.property(fc.array(recordArb, { minLength: 1, maxLength: 3 }), anyText, (specs, calName) => {
      const records = specs.map((s, i) =>
        record({
          id: `bsc_evt_${i.toString(16).padStart(20, '0')}`,
          title: s.title,
          description: s.description,
          summary: s.summary,
          venue: { name: s.name, address: s.address, city: 'Oakland', lat: 37.8, lng: -122.27, geo_precision: 'venue' },
          categories: s.categories,
          start_datetime: isoLocal(s.start),
          end_datetime: s.minutes === null ? null : isoLocal(s.start + s.minutes * 60),
          is_canceled: s.canceled,
          age_range_years: null,
        }),
      );
      const info = { ...CAL, name: calName };
      const body = icsBody(records, info);
      assert.ok(body.equals(icsBody(structuredClone(records), { ...info })), 'equal input, equal bytes');
      const { cal, events } = parse(body);
      assert.equal(text(cal, 'x-wr-calname'), documented(calName));
      assert.equal(events.size, records.length);
      for (const r of records) {
        const ve = events.get(r.id)!;
        assertEvent(ve, r);
        const about = [r.description, r.summary].find((s) => s !== null && s !== '') ?? null;
        const expected = [r.is_canceled ? 'This event is canceled.' : '', about === null ? '' : documented(about), 'Free', r.event_url];
        assert.equal(text(ve, 'description'), expected.filter((s) => s !== '').join('\n\n'));
      }
      runs++;
    }),
    { interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, numRuns: 10_000 },
  );
  assert.ok(runs >= 20, `only ${runs} runs in the budget`);
});
