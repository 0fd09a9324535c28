// The website's templates, rendered as pure functions and read back with a real HTML parser
// (htmlparser2): a hostile upstream event stays text everywhere (page, title, JSON-LD), no page
// carries script, inline style or a javascript:/data: link, every control has a label, headings and
// ids are well formed. The people-facing wording (format.ts) is checked against Intl and against the
// pipeline's own age parser; the Google Calendar link and the JSON-LD are parsed back, not matched as text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { EventRecord } from '../../../core/record.ts';
import { parseAges } from '../../../snapshot/normalize/ages.ts';
import { agesText, dateHeading, fullDate, googleCalendarUrl, osmUrl, priceText, whenText } from '../../../server/web/format.ts';
import { eventJsonLd, postalAddress } from '../../../server/web/jsonld.ts';
import { renderPage, SECURITY_HEADERS, type Site } from '../../../server/web/layout.ts';
import { html } from '../../../server/web/html.ts';
import { browsePage, type BrowseInput } from '../../../server/web/pages/browse.ts';
import { eventPage } from '../../../server/web/pages/event.ts';
import {
  badRequestPage,
  categoryNotListedPage,
  gonePage,
  internalErrorPage,
  methodNotAllowedPage,
  notFoundPage,
  tooManyRequestsPage,
  unavailablePage,
} from '../../../server/web/pages/errors.ts';
import type { GoneEvent } from '../../../snapshot/gone.ts';

// The machine's zone must never show through: every time below is written for Pacific time.
process.env.TZ = 'Asia/Kolkata';

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<typeof DomUtils.findAll>[number];

const SITE: Site = { webBaseUrl: 'https://web.example', apiBaseUrl: 'https://web.example/api', name: 'Family Events' };
/** Saturday 2025-12-06, 09:00 Pacific. */
const NOW_MS = Date.parse('2025-12-06T09:00:00-08:00');

function record(over: Partial<EventRecord> = {}): EventRecord {
  const id = over.id ?? 'bsc_evt_0123456789abcdef';
  return {
    id,
    title: 'Toddler Storytime',
    description: 'Songs, rhymes and stories for toddlers.\n\nBring a blanket.\nCaregivers stay with their children.',
    summary: 'Songs, rhymes and stories for toddlers.',
    start_datetime: '2025-12-06T10:30:00-08:00',
    end_datetime: '2025-12-06T11:30:00-08:00',
    venue: { name: 'Central Library', address: '2090 Kittredge St, Berkeley, CA 94704', city: 'Berkeley', lat: 37.868, lng: -122.2686, geo_precision: 'venue' },
    organizer: 'Berkeley Public Library',
    organizer_url: 'https://www.berkeleypubliclibrary.org/',
    categories: ['storytime', 'music'],
    tags: ['toddlers'],
    image_url: 'https://www.berkeleypubliclibrary.org/img/storytime.jpg',
    is_free: true,
    price: null,
    ticket_url: 'https://www.berkeleypubliclibrary.org/register/123',
    source: 'berkeleypubliclibrary.org',
    source_url: null,
    destination: 'east-bay',
    age_range: { min_months: 12, max_months: 35 },
    age_range_years: { min_years: 1, max_years: 2 },
    is_canceled: false,
    all_day: false,
    created_at: '2026-11-01T09:00:00.000-07:00',
    updated_at: '2026-11-02T09:00:00.000-08:00',
    event_url: `${SITE.webBaseUrl}/events/${id}`,
    ...over,
  };
}

const HOSTILE_TITLE = `"><script>alert("x")</script> & 'quotes' <!-- --> ]]>`;
const HOSTILE_DESCRIPTION = `Before</script><img src=x onerror=alert(1)>\n\n<a href="javascript:alert(2)">click</a> <style>body{}</style>`;

const hostile = (): EventRecord =>
  record({
    id: 'bsc_evt_hostile0000000001',
    title: HOSTILE_TITLE,
    description: HOSTILE_DESCRIPTION,
    summary: `</script><script>alert(3)</script>`,
    ticket_url: 'javascript:alert(1)',
    organizer: `<b onmouseover="alert(4)">Org</b>`,
    organizer_url: 'data:text/html,<script>alert(5)</script>',
    image_url: 'javascript:alert(6)',
    venue: { name: `Hall "A" <i>`, address: `1 <Main> St, Oakland, CA 94612`, city: 'Oakland', lat: 37.8, lng: -122.27, geo_precision: 'venue' },
    categories: ['storytime', `"><x onload=alert(7)>`],
    source: `evil.example"><script>`,
    event_url: `${SITE.webBaseUrl}/events/bsc_evt_hostile0000000001`,
  });

// ---------------------------------------------------------------------------------------------
// Reading documents back

const parse = (text: string): Doc => parseDocument(text, { lowerCaseTags: true, lowerCaseAttributeNames: true });
const all = (doc: Doc, pred: (e: El) => boolean): El[] => DomUtils.findAll(pred, doc.children);
const byTag = (doc: Doc, tag: string): El[] => all(doc, (e) => e.name === tag);
const text = (e: El | Doc): string => DomUtils.textContent(e);
const attr = (e: El, name: string): string | undefined => DomUtils.getAttributeValue(e, name);
const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The checks every page must pass, whatever it shows. */
function assertSoundPage(page: string): Doc {
  assert.ok(page.startsWith('<!doctype html>'), 'doctype first');
  const doc = parse(page);
  const root = byTag(doc, 'html');
  assert.equal(root.length, 1);
  assert.equal(attr(root[0]!, 'lang'), 'en');

  // No script but the JSON-LD data block and our own file; nothing inline may run.
  for (const s of byTag(doc, 'script')) {
    const type = attr(s, 'type');
    if (type === 'application/ld+json') {
      assert.doesNotThrow(() => JSON.parse(text(s)), 'JSON-LD parses');
      continue;
    }
    assert.equal(attr(s, 'src'), '/static/site.js', `unexpected script ${DomUtils.getOuterHTML(s).slice(0, 120)}`);
    assert.equal(text(s), '', 'an external script has no body');
  }
  assert.equal(byTag(doc, 'script').filter((s) => attr(s, 'type') === 'application/ld+json').length <= 1, true);
  assert.equal(byTag(doc, 'style').length, 0, 'no <style>: CSP blocks inline style');
  for (const tag of ['object', 'embed', 'base']) assert.equal(byTag(doc, tag).length, 0, `no <${tag}>`);
  // The one frame is an event page's map: empty until the visitor asks for the map, titled, sandboxed.
  for (const f of byTag(doc, 'iframe')) {
    assert.equal(attr(f, 'src'), 'about:blank', 'a frame loads nothing by itself');
    assert.ok(attr(f, 'title'), 'a frame has a title');
    assert.ok(attr(f, 'sandbox') !== undefined, 'a frame is sandboxed');
  }
  // Pictures (an event's): https only, with alt text (empty when decorative) and a reserved size.
  for (const i of byTag(doc, 'img')) {
    assert.match(attr(i, 'src') ?? '', /^https:\/\//, 'a picture from https only (the CSP allows no other)');
    assert.ok(attr(i, 'alt') !== undefined, 'a picture has alt');
    assert.ok(Number(attr(i, 'width')) > 0 && Number(attr(i, 'height')) > 0, 'a picture has its size');
  }
  for (const e of all(doc, () => true)) {
    for (const name of Object.keys(e.attribs)) {
      assert.ok(!name.startsWith('on'), `event handler attribute ${name} on <${e.name}>`);
      assert.notEqual(name, 'style', `style attribute on <${e.name}>`);
    }
    for (const name of ['href', 'src', 'action', 'formaction', 'content']) {
      const v = attr(e, name);
      if (v === undefined) continue;
      assert.ok(!/^\s*(?:javascript|data|vbscript):/i.test(v), `${name}=${v} on <${e.name}>`);
    }
  }

  // Landmarks and structure.
  assert.equal(byTag(doc, 'main').length, 1);
  assert.equal(attr(byTag(doc, 'main')[0]!, 'id'), 'main');
  assert.equal(byTag(doc, 'h1').length, 1, 'one h1');
  assert.equal(byTag(doc, 'header').length, 1);
  assert.equal(byTag(doc, 'footer').length, 1);
  const skip = byTag(doc, 'a').find((a) => attr(a, 'href') === '#main');
  assert.ok(skip && norm(text(skip)) === 'Skip to content', 'skip link');

  const levels = all(doc, (e) => /^h[1-6]$/.test(e.name)).map((h) => Number(h.name[1]));
  assert.equal(levels[0], 1, 'the h1 comes first');
  for (let i = 1; i < levels.length; i++) assert.ok(levels[i]! <= levels[i - 1]! + 1, `heading skip h${levels[i - 1]} → h${levels[i]}`);

  const ids = all(doc, (e) => attr(e, 'id') !== undefined).map((e) => attr(e, 'id')!);
  assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
  const idSet = new Set(ids);
  for (const e of all(doc, (el) => attr(el, 'aria-describedby') !== undefined || attr(el, 'aria-labelledby') !== undefined)) {
    for (const ref of `${attr(e, 'aria-describedby') ?? ''} ${attr(e, 'aria-labelledby') ?? ''}`.split(/\s+/).filter(Boolean)) {
      assert.ok(idSet.has(ref), `aria reference to missing #${ref}`);
    }
  }
  for (const a of byTag(doc, 'a')) {
    const href = attr(a, 'href');
    assert.ok(href !== undefined && href !== '', 'every link has an href');
    if (href.startsWith('#')) assert.ok(idSet.has(href.slice(1)), `in-page link to missing ${href}`);
    assert.notEqual(norm(text(a)), '', `link text for ${href}`);
  }

  // Every form control has a visible label pointing at it.
  const labelled = new Set(byTag(doc, 'label').map((l) => attr(l, 'for')));
  for (const c of all(doc, (e) => e.name === 'select' || (e.name === 'input' && attr(e, 'type') !== 'hidden'))) {
    const id = attr(c, 'id');
    assert.ok(id !== undefined && labelled.has(id), `control ${attr(c, 'name')} has a <label for>`);
  }
  for (const l of byTag(doc, 'label')) assert.notEqual(norm(text(l)), '', 'label text');

  // Lists hold only list items.
  for (const list of all(doc, (e) => e.name === 'ul' || e.name === 'ol')) {
    for (const child of list.children) {
      if (child.type === 'tag') assert.equal(child.name, 'li', `<${list.name}> holds <${child.name}>`);
    }
  }
  return doc;
}

const metaContent = (doc: Doc, key: string): string | undefined => {
  const m = byTag(doc, 'meta').find((e) => attr(e, 'name') === key || attr(e, 'property') === key);
  return m === undefined ? undefined : attr(m, 'content');
};
const linkHref = (doc: Doc, rel: string): string | undefined => {
  const l = byTag(doc, 'link').find((e) => attr(e, 'rel') === rel);
  return l === undefined ? undefined : attr(l, 'href');
};
const jsonLdOf = (doc: Doc): Record<string, unknown> => {
  const blocks = byTag(doc, 'script').filter((s) => attr(s, 'type') === 'application/ld+json');
  assert.equal(blocks.length, 1);
  return JSON.parse(text(blocks[0]!)) as Record<string, unknown>;
};
const linksByText = (doc: Doc, label: string): El[] => byTag(doc, 'a').filter((a) => norm(text(a)).startsWith(label));

// ---------------------------------------------------------------------------------------------

describe('format: when, in Pacific time', () => {
  const cases: readonly [string, string | null, string][] = [
    ['2025-12-06T10:30:00-08:00', '2025-12-06T11:30:00-08:00', 'Sat, Dec 6, 10:30–11:30 AM'],
    ['2025-12-06T11:30:00-08:00', '2025-12-06T13:00:00-08:00', 'Sat, Dec 6, 11:30 AM–1 PM'],
    ['2025-12-06T10:00:00-08:00', '2025-12-06T11:00:00-08:00', 'Sat, Dec 6, 10–11 AM'],
    ['2025-12-06T10:00:00-08:00', null, 'Sat, Dec 6, 10 AM'],
    ['2025-12-06T12:00:00-08:00', '2025-12-06T12:45:00-08:00', 'Sat, Dec 6, 12–12:45 PM'],
    ['2025-12-06T19:00:00-08:00', '2025-12-07T02:00:00-08:00', 'Sat, Dec 6, 7 PM – Sun, Dec 7, 2 AM'],
    ['2025-12-06T19:00:00-08:00', '2025-12-07T00:00:00-08:00', 'Sat, Dec 6, 7 PM–midnight'],
    // Midnight to 23:59:59 without the all_day flag is an event with those times (the flag decides).
    ['2025-12-06T00:00:00-08:00', '2025-12-06T23:59:59-08:00', 'Sat, Dec 6, 12 AM–11:59 PM'],
    // Given as UTC instants: the wall clock is Pacific, in standard and in daylight time.
    ['2025-12-06T18:30:00Z', '2025-12-06T19:30:00Z', 'Sat, Dec 6, 10:30–11:30 AM'],
    ['2025-07-04T17:00:00Z', null, 'Fri, Jul 4, 10 AM'],
    // Across the spring-forward gap (2025-03-09 02:00 PST → 03:00 PDT): one hour, two clock hours apart.
    ['2025-03-09T01:30:00-08:00', '2025-03-09T03:30:00-07:00', 'Sun, Mar 9, 1:30–3:30 AM'],
    // Fall back (2025-11-02): the evening before ends at 1:30 PST, two hours after a 12:30 PDT start.
    ['2025-11-02T00:30:00-07:00', '2025-11-02T01:30:00-08:00', 'Sun, Nov 2, 12:30–1:30 AM'],
    // Same instant as end: no range.
    ['2025-12-06T10:00:00-08:00', '2025-12-06T10:00:00-08:00', 'Sat, Dec 6, 10 AM'],
  ];
  for (const [start, end, want] of cases) {
    test(`${start} → ${end ?? 'no end'}: ${want}`, () => assert.equal(whenText(start, end, NOW_MS), want));
  }

  test('an all-day event (all_day) says "All day" and its days, never a clock', () => {
    assert.equal(whenText('2025-12-06T00:00:00-08:00', '2025-12-06T23:59:59-08:00', NOW_MS, true), 'Sat, Dec 6, All day');
    assert.equal(whenText('2025-12-06T00:00:00-08:00', '2025-12-14T23:59:59-08:00', NOW_MS, true), 'Sat, Dec 6 – Sun, Dec 14, All day');
    assert.equal(whenText('2025-12-06T00:00:00-08:00', null, NOW_MS, true), 'Sat, Dec 6, All day');
    // Across the spring-forward night: the days are Pacific's whatever the offsets.
    assert.equal(whenText('2026-03-07T00:00:00-08:00', '2026-03-08T23:59:59-07:00', NOW_MS, true), 'Sat, Mar 7, 2026 – Sun, Mar 8, 2026, All day');
    assert.equal(whenText('2027-01-09T00:00:00-08:00', '2027-01-09T23:59:59-08:00', NOW_MS, true), 'Sat, Jan 9, 2027, All day');
  });

  test('the year shows when the event is not in the current Pacific year', () => {
    assert.equal(whenText('2027-01-09T10:00:00-08:00', null, NOW_MS), 'Sat, Jan 9, 2027, 10 AM');
    assert.equal(whenText('2026-12-31T19:00:00-08:00', '2027-01-01T01:00:00-08:00', NOW_MS), 'Thu, Dec 31, 2026, 7 PM – Fri, Jan 1, 2027, 1 AM');
    assert.equal(whenText('2025-12-31T19:00:00-08:00', '2026-01-01T01:00:00-08:00', NOW_MS), 'Wed, Dec 31, 2025, 7 PM – Thu, Jan 1, 2026, 1 AM');
    assert.equal(whenText('2027-01-09T10:00:00-08:00', null), 'Sat, Jan 9, 10 AM', 'no clock, no year');
    // New Year's Eve 23:30 Pacific is already 2027 in UTC: the year is Pacific's.
    const nye = Date.parse('2026-12-31T23:30:00-08:00');
    assert.equal(whenText('2026-12-31T23:45:00-08:00', null, nye), 'Thu, Dec 31, 11:45 PM');
    assert.equal(whenText('2027-01-01T10:00:00-08:00', null, nye), 'Fri, Jan 1, 2027, 10 AM');
  });

  test('day headings', () => {
    assert.equal(dateHeading('2025-12-06T10:30:00-08:00'), 'Saturday, December 6');
    assert.equal(dateHeading('2025-12-07T07:30:00Z'), 'Saturday, December 6', 'late evening Pacific is still that day');
    assert.equal(dateHeading('2027-01-09T10:00:00-08:00', NOW_MS), 'Saturday, January 9, 2027');
    assert.equal(dateHeading('2025-12-09T10:00:00-08:00', NOW_MS), 'Tuesday, December 9');
    assert.equal(fullDate('2025-12-06T10:30:00-08:00'), 'Saturday, December 6, 2025');
  });

  // Intl (ICU's tz data) is an oracle independent of luxon for the day and clock of any instant.
  const intlDay = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'short', month: 'short', day: 'numeric' });
  const intlTime = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', hour: 'numeric', minute: '2-digit' });
  const intlLong = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'long', month: 'long', day: 'numeric' });
  const spaces = (s: string): string => s.replace(/\s/g, ' ');
  test('any instant reads as Intl reads it in America/Los_Angeles (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2035-12-31T00:00:00Z') }), (ms) => {
        const minuteMs = ms - (ms % 60_000);
        const iso = new Date(minuteMs).toISOString();
        const time = spaces(intlTime.format(minuteMs)).replace(':00 ', ' ');
        assert.equal(whenText(iso, null), `${spaces(intlDay.format(minuteMs))}, ${time}`);
        assert.equal(dateHeading(iso), spaces(intlLong.format(minuteMs)));
      }),
      { interruptAfterTimeLimit: 2000, markInterruptAsFailure: false, numRuns: 20_000 },
    );
  });
});

describe('format: ages, as the pipeline stores them', () => {
  // Phrases go through the pipeline's own parser, so the wording is checked against the stored form.
  const phrases: readonly [string, string][] = [
    ['ages 3-5', 'Ages 3–5'],
    ['ages 12 and up', 'Ages 12 and up'],
    ['for teens ages 13-18', 'Ages 13 and up'],
    ['ages 6-18 months', 'Ages 6–18 months'],
    ['0-18 months', 'Ages 0–18 months'],
    ['ages 0-5', 'Ages 0–5'],
    ['ages 0-1', 'Under 2'],
    ['ages 4-4', 'Age 4'],
    ['grades K-2', 'Ages 5–8'],
    ['ages 6 months to 3 years', 'Ages 6 months to 3 years'],
    ['ages 0-18', 'Ages 18 and under'],
  ];
  for (const [phrase, want] of phrases) {
    test(`"${phrase}" → ${want}`, () => {
      const v = parseAges(null, phrase, null);
      assert.ok(v !== null && v.kind === 'range', `the pipeline reads a range from "${phrase}"`);
      assert.equal(agesText(v.range), want);
    });
  }
  test('no range is all ages; babies in months', () => {
    assert.equal(agesText(null), 'All ages');
    assert.equal(agesText({ min_months: 0, max_months: 11 }), 'Under 1');
    assert.equal(agesText({ min_months: 12, max_months: 12 }), 'Age 12 months');
    assert.equal(agesText({ min_months: 24, max_months: 30 }), 'Age 2');
    assert.equal(agesText({ min_months: 6, max_months: 227 }), 'Ages 6 months and up');
  });
  test('every stored range gets words that name its ends (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 227 }), fc.integer({ min: 0, max: 227 }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const t = agesText({ min_months: lo, max_months: hi });
        assert.match(t, /^(?:Ages? |Under )/);
        assert.doesNotMatch(t, /NaN|undefined|-\d|\.\d/);
      }),
      { interruptAfterTimeLimit: 1000, markInterruptAsFailure: false, numRuns: 20_000 },
    );
  });
});

describe('format: price', () => {
  const cases: readonly [boolean, EventRecord['price'], string][] = [
    [true, null, 'Free'],
    [true, { min: 0, max: 0, note: 'Free' }, 'Free'],
    [false, { min: 5, max: 5, note: null }, '$5'],
    [false, { min: 5, max: 12, note: null }, '$5–$12'],
    [false, { min: 7.5, max: null, note: null }, '$7.50'],
    [false, { min: null, max: 20, note: null }, '$20'],
    [false, { min: null, max: null, note: '$10 suggested donation' }, '$10 suggested donation'],
    [false, null, 'Price not listed'],
  ];
  for (const [isFree, price, want] of cases) test(`${JSON.stringify([isFree, price])} → ${want}`, () => assert.equal(priceText(isFree, price), want));
});

describe('format: links out', () => {
  /** Google's 20251206T183000Z as epoch ms. */
  const stampMs = (s: string): number => {
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
    assert.ok(m, `UTC stamp ${s}`);
    return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  };

  test('Google Calendar: a template whose dates are the record’s instants', () => {
    const r = hostile();
    const u = new URL(googleCalendarUrl(r));
    assert.equal(u.origin + u.pathname, 'https://calendar.google.com/calendar/render');
    assert.equal(u.searchParams.get('action'), 'TEMPLATE');
    assert.equal(u.searchParams.get('text'), HOSTILE_TITLE);
    assert.equal(u.searchParams.get('ctz'), 'America/Los_Angeles');
    assert.equal(u.searchParams.get('location'), `${r.venue.name}, ${r.venue.address}`);
    assert.ok(u.searchParams.get('details')!.includes(r.event_url));
    const [from, to] = u.searchParams.get('dates')!.split('/');
    assert.equal(stampMs(from!), Date.parse(r.start_datetime));
    assert.equal(stampMs(to!), Date.parse(r.end_datetime!));
  });

  test('Google Calendar: DST instants, no end, all-day dates', () => {
    const summer = record({ start_datetime: '2026-07-04T10:00:00-07:00', end_datetime: '2026-07-04T12:15:00-07:00' });
    const [a, b] = new URL(googleCalendarUrl(summer)).searchParams.get('dates')!.split('/');
    assert.equal(a, '20260704T170000Z');
    assert.equal(stampMs(b!), Date.parse(summer.end_datetime!));
    const open = record({ end_datetime: null });
    const [c, d] = new URL(googleCalendarUrl(open)).searchParams.get('dates')!.split('/');
    assert.equal(stampMs(c!), Date.parse(open.start_datetime));
    assert.equal(d, c);
    const allDay = record({ start_datetime: '2025-12-06T00:00:00-08:00', end_datetime: '2025-12-07T23:59:59-08:00', all_day: true });
    assert.equal(new URL(googleCalendarUrl(allDay)).searchParams.get('dates'), '20251206/20251208');
    const oneDay = record({ start_datetime: '2025-12-06T00:00:00-08:00', end_datetime: null, all_day: true });
    assert.equal(new URL(googleCalendarUrl(oneDay)).searchParams.get('dates'), '20251206/20251207');
    // The same times without the flag are an instant range, not dates.
    const timed = record({ start_datetime: '2025-12-06T00:00:00-08:00', end_datetime: '2025-12-07T23:59:59-08:00' });
    assert.equal(new URL(googleCalendarUrl(timed)).searchParams.get('dates'), '20251206T080000Z/20251208T075959Z');
  });

  test('OpenStreetMap marker link', () => {
    const u = new URL(osmUrl(37.8680001234, -122.2686));
    assert.equal(u.origin, 'https://www.openstreetmap.org');
    assert.equal(u.searchParams.get('mlat'), '37.868');
    assert.equal(u.searchParams.get('mlon'), '-122.2686');
    assert.equal(u.hash, '#map=17/37.868/-122.2686');
  });
});

describe('JSON-LD (schema.org Event)', () => {
  test('an all-day event gives startDate and endDate as its Pacific days (schema.org Date)', () => {
    const one = eventJsonLd(record({ start_datetime: '2026-11-21T00:00:00-08:00', end_datetime: '2026-11-21T23:59:59-08:00', all_day: true })) as Record<
      string,
      unknown
    >;
    assert.equal(one['startDate'], '2026-11-21');
    assert.equal(one['endDate'], '2026-11-21');
    const weekend = eventJsonLd(record({ start_datetime: '2026-03-07T00:00:00-08:00', end_datetime: '2026-03-08T23:59:59-07:00', all_day: true })) as Record<
      string,
      unknown
    >;
    assert.equal(weekend['startDate'], '2026-03-07');
    assert.equal(weekend['endDate'], '2026-03-08');
    const open = eventJsonLd(record({ start_datetime: '2026-11-21T00:00:00-08:00', end_datetime: null, all_day: true })) as Record<string, unknown>;
    assert.equal(open['startDate'], '2026-11-21');
    assert.equal('endDate' in open, false);
    for (const d of [one, weekend, open]) assert.match(String(d['startDate']), /^\d{4}-\d{2}-\d{2}$/);
  });

  test('everything Google requires and recommends, from the record', () => {
    const r = record({ is_free: false, price: { min: 5, max: 12, note: null } });
    const ld = eventJsonLd(r) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(ld['@context'], 'https://schema.org');
    assert.equal(ld['@type'], 'Event');
    assert.equal(ld.name, r.title);
    assert.equal(ld.description, r.description);
    assert.equal(ld.startDate, r.start_datetime);
    assert.equal(ld.endDate, r.end_datetime);
    assert.equal(ld.eventStatus, 'https://schema.org/EventScheduled');
    assert.equal(ld.eventAttendanceMode, 'https://schema.org/OfflineEventAttendanceMode');
    assert.deepEqual(ld.location, {
      '@type': 'Place',
      name: 'Central Library',
      address: {
        '@type': 'PostalAddress',
        streetAddress: '2090 Kittredge St',
        addressLocality: 'Berkeley',
        addressRegion: 'CA',
        postalCode: '94704',
        addressCountry: 'US',
      },
      geo: { '@type': 'GeoCoordinates', latitude: 37.868, longitude: -122.2686 },
    });
    assert.deepEqual(ld.organizer, { '@type': 'Organization', name: 'Berkeley Public Library', url: 'https://www.berkeleypubliclibrary.org/' });
    assert.deepEqual(ld.offers, { '@type': 'Offer', price: 5, priceCurrency: 'USD', url: r.ticket_url, availability: 'https://schema.org/InStock' });
    assert.equal(ld.isAccessibleForFree, false);
    assert.equal(ld.typicalAgeRange, '1-2');
    assert.deepEqual(ld.image, [r.image_url]);
    assert.equal(ld.url, r.event_url);
  });

  test('offers only when the price is known or the event is free', () => {
    const offers = (r: EventRecord): unknown => (eventJsonLd(r) as Record<string, unknown>).offers;
    assert.deepEqual(offers(record({ is_free: true, ticket_url: null })), {
      '@type': 'Offer',
      price: 0,
      priceCurrency: 'USD',
      url: `${SITE.webBaseUrl}/events/bsc_evt_0123456789abcdef`,
      availability: 'https://schema.org/InStock',
    });
    assert.equal(offers(record({ is_free: false, price: null })), undefined);
    assert.equal(offers(record({ is_free: false, price: { min: null, max: null, note: 'Donations welcome' } })), undefined);
    assert.equal((offers(record({ is_free: false, price: { min: null, max: 8, note: null } })) as { price: number }).price, 8);
  });

  test('canceled events, open age ranges, unknown parts left out', () => {
    const ld = eventJsonLd(
      record({
        is_canceled: true,
        age_range: { min_months: 144, max_months: 227 },
        age_range_years: { min_years: 12, max_years: 18 },
        organizer: null,
        image_url: null,
        end_datetime: null,
        description: null,
        summary: null,
      }),
    ) as Record<string, unknown>;
    assert.equal(ld.eventStatus, 'https://schema.org/EventCancelled');
    assert.equal(ld.typicalAgeRange, '12-');
    assert.equal((ld.offers as { availability: string }).availability, 'https://schema.org/Discontinued');
    for (const k of ['organizer', 'image', 'endDate', 'description']) assert.ok(!(k in ld), `${k} left out`);
    const all = eventJsonLd(record({ age_range: null, age_range_years: null })) as Record<string, unknown>;
    assert.ok(!('typicalAgeRange' in all));
  });

  test('addresses without a street or a ZIP, and ones that do not parse', () => {
    const v = record().venue;
    assert.deepEqual(postalAddress({ ...v, address: 'Berkeley, CA 94704' }), {
      '@type': 'PostalAddress',
      addressLocality: 'Berkeley',
      addressRegion: 'CA',
      postalCode: '94704',
      addressCountry: 'US',
    });
    assert.deepEqual(postalAddress({ ...v, address: '1 Main St, Berkeley, CA' }), {
      '@type': 'PostalAddress',
      streetAddress: '1 Main St',
      addressLocality: 'Berkeley',
      addressRegion: 'CA',
      addressCountry: 'US',
    });
    assert.deepEqual(postalAddress({ ...v, address: 'Somewhere odd' }), {
      '@type': 'PostalAddress',
      streetAddress: 'Somewhere odd',
      addressLocality: 'Berkeley',
      addressRegion: 'CA',
      addressCountry: 'US',
    });
  });
});

describe('layout', () => {
  test('security headers: a CSP with nothing inline, and the usual companions', () => {
    const h = new Map(SECURITY_HEADERS.map(([k, v]) => [k.toLowerCase(), v]));
    const csp = new Map(
      h
        .get('content-security-policy')!
        .split(';')
        .map((d) => {
          const [name, ...values] = d.trim().split(/\s+/);
          return [name!, values] as const;
        }),
    );
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('script-src'), ["'self'"]);
    assert.deepEqual(csp.get('style-src'), ["'self'"]);
    assert.deepEqual(csp.get('object-src'), ["'none'"]);
    assert.deepEqual(csp.get('base-uri'), ["'none'"]);
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
    assert.deepEqual(csp.get('form-action'), ["'self'"]);
    for (const values of csp.values()) for (const v of values) assert.doesNotMatch(v, /unsafe/);
    assert.equal(h.get('x-content-type-options'), 'nosniff');
    assert.equal(h.get('referrer-policy'), 'strict-origin-when-cross-origin');
    assert.equal(h.get('x-frame-options'), 'DENY');
    assert.ok(h.has('permissions-policy'));
  });

  test('the head: title, description, canonical, Open Graph, Twitter card, stylesheet, icon', () => {
    const doc = assertSoundPage(
      renderPage(
        SITE,
        { title: 'Docs <&> – Family Events', description: 'About "this"', canonicalPath: '/docs', og: { type: 'website', image: 'https://img.example/a.png' } },
        html`<h1>Docs</h1>`,
      ),
    );
    assert.equal(text(byTag(doc, 'title')[0]!), 'Docs <&> – Family Events');
    assert.equal(metaContent(doc, 'description'), 'About "this"');
    assert.equal(linkHref(doc, 'canonical'), 'https://web.example/docs');
    assert.equal(metaContent(doc, 'og:url'), 'https://web.example/docs');
    assert.equal(metaContent(doc, 'og:title'), 'Docs <&> – Family Events');
    assert.equal(metaContent(doc, 'og:type'), 'website');
    assert.equal(metaContent(doc, 'og:site_name'), 'Family Events');
    assert.equal(metaContent(doc, 'og:image'), 'https://img.example/a.png');
    assert.equal(metaContent(doc, 'twitter:card'), 'summary_large_image');
    assert.equal(linkHref(doc, 'stylesheet'), '/static/site.css');
    assert.equal(linkHref(doc, 'icon'), '/static/favicon.svg');
    assert.equal(metaContent(doc, 'robots'), undefined);
    assert.equal(byTag(doc, 'script').length, 0, 'no script unless asked for');
    const nav = byTag(doc, 'nav')[0]!;
    const current = DomUtils.findAll((e) => attr(e, 'aria-current') !== undefined, nav.children);
    assert.deepEqual(
      current.map((a) => [attr(a, 'href'), attr(a, 'aria-current')]),
      [['/docs', 'page']],
    );
    assert.deepEqual(
      DomUtils.findAll((e) => e.name === 'a', byTag(doc, 'footer')[0]!.children).map((a) => attr(a, 'href')),
      ['/docs'],
    );
  });
});

describe('event page', () => {
  const render = (r: EventRecord, nowMs = NOW_MS): Doc =>
    assertSoundPage(eventPage(SITE, r, { nowMs, icsPath: `/events/${r.id}.ics`, similarPath: '/events?category=storytime' }).html);

  test('a hostile upstream event renders as text everywhere', () => {
    const r = hostile();
    const doc = render(r);
    assert.equal(text(byTag(doc, 'title')[0]!), `${HOSTILE_TITLE} – Family Events`);
    assert.equal(text(byTag(doc, 'h1')[0]!), HOSTILE_TITLE);
    assert.equal(metaContent(doc, 'og:title'), `${HOSTILE_TITLE} – Family Events`);
    const ld = jsonLdOf(doc);
    assert.equal(ld.name, HOSTILE_TITLE);
    assert.equal(ld.description, HOSTILE_DESCRIPTION);
    assert.ok(!('image' in ld), 'a javascript: image is left out');
    assert.deepEqual(ld.organizer, { '@type': 'Organization', name: r.organizer }, 'a data: organizer URL is left out');
    // The description's paragraphs read back as the text it holds.
    const paras = byTag(doc, 'section').find((s) => attr(s, 'class') === 'description')!;
    assert.deepEqual(DomUtils.findAll((e) => e.name === 'p', paras.children).map(text), HOSTILE_DESCRIPTION.split('\n\n'));
    assert.equal(linksByText(doc, 'Tickets').length, 0, 'no ticket link for a javascript: URL');
    assert.equal(byTag(doc, 'a').filter((a) => norm(text(a)) === norm(r.organizer!)).length, 0, 'no organizer link for a data: URL');
    assert.ok(norm(text(byTag(doc, 'main')[0]!)).includes(norm(`<b onmouseover="alert(4)">Org</b>`)), 'the organizer name is shown as text');
    assert.equal(metaContent(doc, 'og:image'), undefined);
    const categoryLinks = byTag(doc, 'a').filter((a) => attr(a, 'href')!.startsWith('/categories/'));
    assert.deepEqual(
      categoryLinks.map((a) => attr(a, 'href')),
      ['/categories/storytime', `/categories/${encodeURIComponent(`"><x onload=alert(7)>`)}`],
    );
    assert.ok(text(byTag(doc, 'main')[0]!).includes(`Listing from ${r.source!}.`));
  });

  test('what a visitor needs: when, where, map, ages, price, categories, organizer, calendar, tickets, attribution', () => {
    const r = record();
    const doc = render(r);
    const main = byTag(doc, 'main')[0]!;
    assert.equal(text(byTag(doc, 'h1')[0]!), 'Toddler Storytime');
    const time = byTag(doc, 'time')[0]!;
    assert.equal(attr(time, 'datetime'), r.start_datetime);
    assert.equal(text(time), 'Sat, Dec 6, 10:30–11:30 AM');
    const facts = Object.fromEntries(
      DomUtils.findAll((e) => e.name === 'dt', main.children).map((dt) => [text(dt), norm(text(DomUtils.nextElementSibling(dt)!))]),
    );
    assert.equal(facts.Ages, 'Ages 1–2');
    assert.equal(facts.Price, 'Free');
    assert.equal(facts.Where, 'Central Library 2090 Kittredge St, Berkeley, CA 94704');
    assert.deepEqual(
      byTag(doc, 'dd')
        .flatMap((dd) => DomUtils.findAll((e) => e.name === 'li', dd.children))
        .map(text),
      ['Storytime', 'Music'],
    );
    assert.equal(facts.Organizer, 'Berkeley Public Library');
    const map = linksByText(doc, 'Show map')[0]!;
    assert.equal(new URL(attr(map, 'href')!).hostname, 'www.openstreetmap.org');
    assert.equal(attr(map, 'target'), attr(byTag(doc, 'iframe')[0]!, 'name'), 'the map loads into the page');
    assert.equal(new URL(attr(linksByText(doc, 'OpenStreetMap')[0]!, 'href')!).hostname, 'www.openstreetmap.org');
    assert.equal(attr(linksByText(doc, 'Berkeley Public Library')[0]!, 'href'), r.organizer_url);
    assert.equal(attr(linksByText(doc, 'Tickets / register')[0]!, 'href'), r.ticket_url);
    assert.equal(attr(linksByText(doc, 'Download .ics')[0]!, 'href'), `/events/${r.id}.ics`);
    assert.equal(new URL(attr(linksByText(doc, 'Google Calendar')[0]!, 'href')!).hostname, 'calendar.google.com');
    assert.equal(attr(linksByText(doc, 'More events like this')[0]!, 'href'), '/events?category=storytime');
    assert.ok(text(main).includes('Listing from berkeleypubliclibrary.org.'));
    assert.deepEqual(DomUtils.findAll((e) => e.name === 'p', byTag(doc, 'section').find((s) => attr(s, 'class') === 'description')!.children).map(text), [
      'Songs, rhymes and stories for toddlers.',
      'Bring a blanket.\nCaregivers stay with their children.',
    ]);
    assert.ok(!text(main).includes('canceled'));
    assert.ok(!text(main).includes('has ended'));
  });

  test("a ZIP's or a town's point is shown as an approximate location: no pin, no JSON-LD geo", () => {
    for (const [precision, approximate] of [
      ['exact', false],
      ['venue', false],
      ['zip', true],
      ['place', true],
    ] as const) {
      const r = record({ venue: { name: 'Some Hall', address: 'Concord, CA', city: 'Concord', lat: 37.978, lng: -122.031, geo_precision: precision } });
      const doc = render(r);
      const map = linksByText(doc, 'OpenStreetMap')[0]!;
      const u = new URL(attr(map, 'href')!);
      assert.equal(norm(text(map)).endsWith('(approximate location)'), approximate, precision);
      assert.equal(text(byTag(doc, 'main')[0]!).includes('Approximate location'), approximate, precision);
      assert.equal(u.searchParams.has('mlat'), !approximate, precision);
      assert.equal(u.hash, approximate ? '#map=13/37.978/-122.031' : '#map=17/37.978/-122.031', precision);
      assert.equal('geo' in (eventJsonLd(r) as { location: object }).location, !approximate, precision);
    }
  });

  test('head: title, description, canonical = event_url, og:type article, og:image, JSON-LD', () => {
    const r = record();
    const doc = render(r);
    assert.equal(text(byTag(doc, 'title')[0]!), 'Toddler Storytime – Family Events');
    assert.equal(linkHref(doc, 'canonical'), r.event_url);
    assert.equal(metaContent(doc, 'og:url'), r.event_url);
    assert.equal(metaContent(doc, 'og:type'), 'article');
    assert.equal(metaContent(doc, 'og:image'), r.image_url);
    const description = metaContent(doc, 'description')!;
    assert.ok(description.includes('Songs, rhymes and stories for toddlers.'));
    assert.ok(description.includes('Sat, Dec 6, 10:30–11:30 AM at Central Library, Berkeley.'));
    assert.equal(jsonLdOf(doc).url, r.event_url);
    assert.deepEqual(
      byTag(doc, 'script').map((e) => attr(e, 'type') ?? attr(e, 'src')),
      ['/static/site.js', 'application/ld+json'],
      'an event page carries its JSON-LD and site.js (share, back to results), nothing inline',
    );
  });

  test('a long summary is cut for the meta description', () => {
    const doc = render(record({ summary: 'word '.repeat(100).trim() }));
    const description = metaContent(doc, 'description')!;
    const summaryPart = description.slice(0, description.indexOf('…') + 1);
    assert.ok(summaryPart.length > 100 && summaryPart.length <= 160, `${summaryPart.length}`);
  });

  test('a canceled event keeps its page, with a banner', () => {
    const doc = render(record({ is_canceled: true }));
    const alert = all(doc, (e) => attr(e, 'role') === 'alert');
    assert.equal(alert.length, 1);
    assert.match(text(alert[0]!), /^Canceled\. This event will not take place/);
    assert.equal(jsonLdOf(doc).eventStatus, 'https://schema.org/EventCancelled');
  });

  test('a past event says it has ended', () => {
    const r = record();
    assert.match(text(byTag(render(r, Date.parse(r.end_datetime!) + 1), 'main')[0]!), /This event has ended/);
    assert.doesNotMatch(text(byTag(render(r, Date.parse(r.end_datetime!) - 1), 'main')[0]!), /has ended/);
    const open = record({ end_datetime: null });
    assert.match(text(byTag(render(open, Date.parse(open.start_datetime) + 1), 'main')[0]!), /This event has ended/);
  });

  test('without organizer, tickets, description or image', () => {
    const doc = render(
      record({ organizer: null, organizer_url: null, ticket_url: null, description: null, summary: null, image_url: null, categories: [], source: null }),
    );
    const dts = byTag(doc, 'dt').map(text);
    assert.deepEqual(dts, ['When', 'Where', 'Ages', 'Price']);
    assert.equal(linksByText(doc, 'Tickets').length, 0);
    assert.equal(metaContent(doc, 'og:image'), undefined);
    assert.equal(metaContent(doc, 'twitter:card'), 'summary');
    assert.ok(text(byTag(doc, 'main')[0]!).includes('Listing from the organizer’s public calendar.'));
  });
});

describe('browse page', () => {
  const base = (over: Partial<BrowseInput> = {}): BrowseInput => ({
    heading: 'Events',
    path: '/events',
    form: {
      action: '/events',
      values: {},
      cities: ['Berkeley', 'Oakland', 'San Francisco'],
      categories: [
        { slug: 'storytime', name: 'Storytime' },
        { slug: 'music', name: 'Music' },
      ],
    },
    errors: [],
    results: null,
    subscribeHref: null,
    icsHref: null,
    nowMs: NOW_MS,
    ...over,
  });

  const records = [
    hostile(),
    record({ id: 'bsc_evt_a1', title: 'Baby Bounce', start_datetime: '2025-12-06T13:00:00-08:00', end_datetime: null, is_canceled: true }),
    record({
      id: 'bsc_evt_a2',
      title: 'Lego Club',
      start_datetime: '2025-12-07T15:00:00-08:00',
      end_datetime: '2025-12-07T16:00:00-08:00',
      is_free: false,
      price: { min: 5, max: 5, note: null },
      distance_km: 2.345,
    }),
    record({
      id: 'bsc_evt_a3',
      title: 'New Year Crafts',
      start_datetime: '2027-01-09T10:00:00-08:00',
      end_datetime: null,
      age_range: null,
      age_range_years: null,
    }),
  ];

  test('a page of results: day headings, event links, count, paging, calendar links', () => {
    const page = browsePage(
      SITE,
      base({
        results: { records, total: 132, offset: 20, limit: 20, prevHref: '/events?offset=0', nextHref: '/events?offset=40' },
        subscribeHref: 'webcal://web.example/events.ics',
        icsHref: 'https://web.example/events.ics',
      }),
    );
    const doc = assertSoundPage(page);
    assert.equal(text(byTag(doc, 'title')[0]!), 'Events (page 2) – Family Events');
    assert.equal(linkHref(doc, 'canonical'), 'https://web.example/events');
    assert.deepEqual(byTag(doc, 'h2').map(text), ['Saturday, December 6', 'Sunday, December 7', 'Saturday, January 9, 2027']);
    const h3 = byTag(doc, 'h3');
    assert.deepEqual(
      h3.map((h) =>
        attr(
          DomUtils.findOne((e) => e.name === 'a', h.children)!,
          'href',
        ),
      ),
      ['/events/bsc_evt_hostile0000000001', '/events/bsc_evt_a1', '/events/bsc_evt_a2', '/events/bsc_evt_a3'],
    );
    assert.equal(text(DomUtils.findOne((e) => e.name === 'a', h3[0]!.children)!), HOSTILE_TITLE);
    assert.equal(norm(text(h3[1]!)), 'Baby Bounce Canceled');
    const cards = all(doc, (e) => attr(e, 'class') === 'card').map((c) => norm(text(c)));
    assert.ok(cards[2]!.includes('Sun, Dec 7, 3–4 PM'));
    assert.ok(cards[2]!.includes('Central Library, Berkeley · 1.5 mi away'));
    assert.ok(cards[2]!.includes('Ages 1–2 · $5'));
    assert.ok(cards[3]!.includes('Sat, Jan 9, 2027, 10 AM'));
    assert.ok(cards[3]!.includes('All ages · Free'));
    assert.ok(norm(text(byTag(doc, 'main')[0]!)).includes('Showing 21–24 of 132 events'));
    const nav = byTag(doc, 'nav').find((n) => attr(n, 'aria-label') === 'Pagination')!;
    assert.deepEqual(
      DomUtils.findAll((e) => e.name === 'a', nav.children).map((a) => [text(a), attr(a, 'href'), attr(a, 'rel')]),
      [
        ['Previous page', '/events?offset=0', 'prev'],
        ['Next page', '/events?offset=40', 'next'],
      ],
    );
    assert.equal(attr(linksByText(doc, 'Subscribe in your calendar')[0]!, 'href'), 'webcal://web.example/events.ics');
    assert.equal(attr(linksByText(doc, 'Download .ics')[0]!, 'href'), 'https://web.example/events.ics');
  });

  test('the form: the API filters by their API names (a period and a place by the website’s when, near and miles), GET, refilled from the request', () => {
    const values = {
      q: `"><script>alert(1)</script>`,
      city: 'oakland',
      category: 'music',
      is_free: 'true',
      age_min: '3',
      age_max: '5',
      week: '2025-W50',
      lat: '37.8',
      lng: '-122.2',
      radius_km: '5',
      start_date: '2025-12-06',
      end_date: '2025-12-07',
    };
    const doc = assertSoundPage(
      browsePage(SITE, base({ form: { ...base().form, values }, results: { records: [], total: 0, offset: 0, limit: 20, prevHref: null, nextHref: null } })),
    );
    const form = byTag(doc, 'form')[0]!;
    assert.equal(attr(form, 'method'), 'get');
    // To the results: the browser scrolls to them and focuses them after the search (issue 28 item 8).
    assert.equal(attr(form, 'action'), '/events#results');
    const controls = DomUtils.findAll((e) => e.name === 'input' || e.name === 'select', form.children);
    assert.deepEqual(controls.map((c) => attr(c, 'name')).sort(), [
      'age_max',
      'age_min',
      'category',
      'city',
      'end_date',
      'is_free',
      'lat',
      'lng',
      'miles',
      'near',
      'q',
      'start_date',
      'week',
      'when',
    ]);
    const control = (name: string): El => controls.find((c) => attr(c, 'name') === name)!;
    assert.equal(attr(control('q'), 'value'), values.q, 'a hostile value comes back as the same text');
    assert.equal(attr(control('age_min'), 'type'), 'number');
    assert.equal(attr(control('age_min'), 'min'), '0');
    assert.equal(attr(control('age_max'), 'max'), '18');
    assert.equal(attr(control('start_date'), 'type'), 'date');
    assert.equal(attr(control('is_free'), 'type'), 'checkbox');
    assert.equal(attr(control('is_free'), 'value'), 'true');
    assert.ok(DomUtils.hasAttrib(control('is_free'), 'checked'));
    const selected = (name: string): string[] =>
      DomUtils.findAll((o) => o.name === 'option' && DomUtils.hasAttrib(o, 'selected'), control(name).children).map((o) => attr(o, 'value')!);
    assert.deepEqual(selected('city'), ['Oakland'], 'a city matches whatever its case');
    assert.deepEqual(selected('category'), ['music']);
    assert.equal(attr(control('week'), 'type'), 'hidden');
    assert.equal(attr(control('week'), 'value'), '2025-W50', 'an ISO week the form does not offer is kept');
    assert.equal(attr(control('lat'), 'value'), '37.8', 'a link’s point is kept');
    assert.deepEqual(selected('miles'), ['3.1'], 'radius_km=5 shows in miles');
    const options = (name: string): string[] => DomUtils.findAll((o) => o.name === 'option', control(name).children).map((o) => attr(o, 'value')!);
    assert.deepEqual(options('city'), ['', 'Berkeley', 'Oakland', 'San Francisco']);
    assert.deepEqual(options('when'), ['', 'today', 'tomorrow', 'weekend', 'week', 'next-week', 'dates']);
    assert.deepEqual(options('miles'), ['1', '3', '5', '', '25', '50', '3.1']);
    assert.deepEqual(byTag(doc, 'legend').map(text), ['Child’s age', 'Dates', 'Near']);
    // The empty result.
    const empty = linksByText(doc, 'see all upcoming events');
    assert.equal(attr(empty[0]!, 'href'), '/events');
    assert.equal(byTag(doc, 'h2').length, 0);
  });

  test('errors: a summary linked to the fields, and each field marked and described', () => {
    const errors = [
      { param: 'city', message: 'Unknown city "Atlantis<script>".' },
      { param: 'near', message: 'We do not know a Bay Area city or town called “Atlantis”.' },
      { param: 'sort', message: 'Not a sort order.' },
    ];
    const doc = assertSoundPage(browsePage(SITE, base({ errors, form: { ...base().form, values: { city: 'Atlantis<script>' } } })));
    const summary = all(doc, (e) => attr(e, 'role') === 'alert')[0]!;
    const items = DomUtils.findAll((e) => e.name === 'li', summary.children);
    assert.deepEqual(
      items.map((li) => norm(text(li))),
      // Parameters by their labels, in the summary and in the messages (issue 28 item 7).
      [
        'City: Unknown city "Atlantis<script>".',
        'ZIP code or town: We do not know a Bay Area city or town called “Atlantis”.',
        'Sort order: Not a sort order.',
      ],
    );
    assert.deepEqual(
      DomUtils.findAll((e) => e.name === 'a', summary.children).map((a) => attr(a, 'href')),
      ['#f-city', '#f-near'],
    );
    for (const [name, message] of [
      ['city', errors[0]!.message],
      ['near', errors[1]!.message],
    ] as const) {
      const c = all(doc, (e) => attr(e, 'name') === name && (e.name === 'input' || e.name === 'select'))[0]!;
      assert.equal(attr(c, 'aria-invalid'), 'true');
      const described = attr(c, 'aria-describedby')!
        .split(' ')
        .map((id) => norm(text(DomUtils.getElementById(id, doc.children)!)));
      assert.ok(
        described.some((d) => d.includes(message)),
        `${name} is described by its error`,
      );
    }
    const miles = all(doc, (e) => attr(e, 'name') === 'miles')[0]!;
    assert.equal(attr(miles, 'aria-invalid'), undefined);
    assert.equal(metaContent(doc, 'robots'), 'noindex');
    assert.equal(all(doc, (e) => attr(e, 'class') === 'card').length, 0);
  });

  test('a category keyless browsing leaves out: a notice that says so and where they are, noindex, no calendar links; a calendar says how many it holds', () => {
    const refused = assertSoundPage(
      browsePage(
        SITE,
        base({ form: { ...base().form, values: { category: 'festivals' } }, unlisted: { categories: ['Fairs & festivals'], planName: 'Community' } }),
      ),
    );
    const notice = byTag(refused, 'div').find((d) => attr(d, 'class') === 'notice')!;
    assert.ok(norm(text(notice)).startsWith('“Fairs & festivals” is not listed on the website.'), text(notice));
    assert.ok(DomUtils.findAll((e) => e.name === 'a', notice.children).some((a) => attr(a, 'href') === '/docs#plans'));
    assert.equal(metaContent(refused, 'robots'), 'noindex');
    assert.equal(linksByText(refused, 'Subscribe in your calendar').length, 0);
    const listing = parse(
      browsePage(
        SITE,
        base({
          results: { records: [record()], total: 1, offset: 0, limit: 20, prevHref: null, nextHref: null },
          subscribeHref: 'webcal://web.example/events.ics',
          icsHref: 'https://web.example/events.ics',
          calendarEvents: 20,
        }),
      ),
    );
    assert.ok(norm(text(listing)).includes('The calendar holds the next 20 events of this search'));
  });

  test('the only result page, and events already under way', () => {
    const ongoing = record({
      id: 'bsc_evt_ongoing',
      title: 'Winter Exhibit',
      start_datetime: '2025-11-01T00:00:00-07:00',
      end_datetime: '2026-01-31T23:59:59-08:00',
    });
    const doc = assertSoundPage(
      browsePage(
        SITE,
        base({
          heading: 'Events in Berkeley',
          intro: 'Libraries & parks.',
          path: '/cities/berkeley',
          results: { records: [ongoing, record()], total: 2, offset: 0, limit: 20, prevHref: null, nextHref: null },
        }),
      ),
    );
    assert.deepEqual(byTag(doc, 'h2').map(text), ['Already under way', 'Saturday, December 6']);
    assert.ok(norm(text(byTag(doc, 'main')[0]!)).includes('2 events'));
    assert.equal(byTag(doc, 'nav').filter((n) => attr(n, 'aria-label') === 'Pagination').length, 0);
    assert.equal(linkHref(doc, 'canonical'), 'https://web.example/cities/berkeley');
    assert.equal(metaContent(doc, 'description'), 'Libraries & parks.');
    assert.equal(text(byTag(doc, 'h1')[0]!), 'Events in Berkeley');
  });
});

describe('error pages', () => {
  const gone: GoneEvent = {
    id: 'bsc_evt_gone',
    title: HOSTILE_TITLE,
    start_datetime: '2025-11-15T10:00:00-08:00',
    venue_city: 'Oakland',
    categories: ['storytime'],
    removed_at: '2025-11-20T03:00:00Z',
  };
  const pages: readonly [string, string, string][] = [
    ['404', notFoundPage(SITE, { path: '/nope/"><script>' }), 'We couldn’t find that page'],
    [
      '410',
      gonePage(SITE, { gone, similarHref: '/events?city=Oakland&category=storytime' }),
      `${HOSTILE_TITLE} on Saturday, November 15, 2025 is no longer listed`,
    ],
    [
      '400',
      badRequestPage(SITE, { detail: 'The calendar link has filters we cannot read.', errors: [{ param: 'age_min', message: 'Must be <b>0–18</b>.' }] }),
      'This address doesn’t work',
    ],
    ['405', methodNotAllowedPage(SITE), 'Request not allowed'],
    ['503', unavailablePage(SITE, { retryAfterS: 120 }), 'We’re busy right now'],
    ['500', internalErrorPage(SITE), 'Something went wrong'],
    ['429', tooManyRequestsPage(SITE, { what: 'calendar', perMinute: 10, retryAfterS: 6 }), 'Please slow down'],
    [
      '403',
      categoryNotListedPage(SITE, { categories: ['Fairs & festivals', 'Seasonal'], planName: 'Community' }),
      '“Fairs & festivals” and “Seasonal” are not listed on the website',
    ],
  ];
  for (const [status, page, h1] of pages) {
    test(`${status}: sound, noindex, says what happened, offers a way on`, () => {
      const doc = assertSoundPage(page);
      assert.equal(text(byTag(doc, 'h1')[0]!), h1);
      assert.equal(metaContent(doc, 'robots'), 'noindex');
      assert.equal(linkHref(doc, 'canonical'), undefined);
      assert.ok(
        byTag(doc, 'a').some((a) => attr(a, 'href') === '/events' || attr(a, 'href') === '/'),
        'a link onwards',
      );
    });
  }

  test('404 has a search box that searches events', () => {
    const doc = parse(pages[0]![1]);
    const form = byTag(doc, 'form')[0]!;
    assert.equal(attr(form, 'action'), '/events');
    assert.equal(attr(form, 'method'), 'get');
    assert.equal(
      attr(
        DomUtils.findOne((e) => e.name === 'input', form.children)!,
        'name',
      ),
      'q',
    );
    assert.ok(text(byTag(doc, 'main')[0]!).includes('/nope/"><script>'));
  });

  test('410 links to similar events; 400 lists the problems; 503 says when to retry', () => {
    assert.equal(attr(linksByText(parse(pages[1]![1]), 'See similar events')[0]!, 'href'), '/events?city=Oakland&category=storytime');
    assert.ok(norm(text(parse(pages[2]![1]))).includes('age_min: Must be <b>0–18</b>.'));
    assert.ok(text(parse(pages[4]![1])).includes('try again in about 2 minutes'));
    assert.ok(text(parse(unavailablePage(SITE))).includes('try again in a little while'));
  });

  test('429 says how many a minute, when to come back, and points programs at the API and its sign-up; 403 at the plans', () => {
    const tooMany = parse(pages[6]![1]);
    assert.ok(norm(text(tooMany)).includes('more than 10 calendar downloads of a search a minute'));
    assert.ok(norm(text(tooMany)).includes('try again in about 6 seconds'));
    for (const href of ['/docs', '/account/sign-in'])
      assert.ok(
        byTag(tooMany, 'a').some((a) => attr(a, 'href') === href),
        href,
      );
    assert.ok(
      norm(text(parse(tooManyRequestsPage(SITE, { what: 'listing', perMinute: 60, retryAfterS: 1 })))).includes('more than 60 event listings a minute'),
    );
    assert.ok(byTag(parse(pages[7]![1]), 'a').some((a) => attr(a, 'href') === '/docs#plans'));
  });
});
