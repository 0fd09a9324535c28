// Plain text means plain text: whatever an upstream item holds, escaped any number of times and in
// any mix of ways, no output field of normalizeEvent holds a tag or an entity, and neither does what
// a consumer reads out of each output format (the RSS reader that renders <description> as HTML, the
// JSON Feed, CSV and iCalendar clients). The oracle is an HTML parser, not the pipeline's own rules:
// text is plain when parsing it as HTML finds no element, comment or directive and decodes nothing.
// Properties with fast-check, on a time budget.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import { textContent } from 'domutils';
import fc from 'fast-check';
import { parseDocument } from 'htmlparser2';
import ICAL from 'ical.js';
import { SaxesParser } from 'saxes';
import { buildWindow } from '../../snapshot/build/build.ts';
import { bundledGazetteer } from '../../snapshot/gazetteer.ts';
import { normalizeEvent, sourceContext } from '../../snapshot/normalize/event.ts';
import { plainText } from '../../snapshot/normalize/text.ts';
import { parseUpstreamTime } from '../../snapshot/normalize/times.ts';
import { emptyRaw } from '../../snapshot/parse/types.ts';
import { parseRegistry } from '../../snapshot/registry.ts';
import type { RawEvent } from '../../snapshot/types.ts';
import { csvBatch } from '../../core/csv.ts';
import { jsonFeedBody, rssBody } from '../../query/feeds.ts';
import { icsBody } from '../../query/ical.ts';
import { toRecord, type EventRow } from '../../core/record.ts';
import type { FeedLinks, SearchTask } from '../../query/protocol.ts';

const BUDGET_MS = 4_000;
const WEB = 'https://web.example';

/** Why `s` is not plain text, or null when it is: an HTML parser finds no node but text in it, and decodes nothing. */
function notPlain(s: string): string | null {
  const doc = parseDocument(s);
  if (doc.children.some((n) => n.type !== 'text')) return `markup in ${JSON.stringify(s)}`;
  if (textContent(doc) !== s) return `an entity in ${JSON.stringify(s)}`;
  return null;
}

function assertPlain(field: string, s: string | null | undefined): void {
  if (s == null) return;
  const why = notPlain(s);
  assert.equal(why, null, `${field}: ${why}`);
}

// What a hostile or sloppy item carries, before escaping.
const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(document.cookie)</script>',
  '<svg onload=alert(1)>',
  '<a href="javascript:alert(1)">click</a>',
  '<iframe src=//evil.example></iframe>',
  '<!-- hidden -->',
  '<![CDATA[x]]>',
  '<?php echo 1 ?>',
  '</p>',
  '<scr<script>x</script>ipt>alert(1)</script>',
  '&lt;b&gt;',
  '&ltscript&gt',
  '&nbsp;&copy;&#169;&#xA9;',
  'Tom & Jerry, Q&A, AT&T, 1 < 2 > 0',
  'Storytime <b>ages 3–5</b>',
];
const payload = fc.oneof(fc.constantFrom(...PAYLOADS), fc.stringMatching(/^[\w\s<>&#;/!?="']{0,30}$/));

// One level of escaping, each in a way real or hostile encoders do it.
const ESCAPERS: readonly ((s: string) => string)[] = [
  (s) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;'),
  (s) => s.replaceAll('&', '&#38;').replaceAll('<', '&#60;').replaceAll('>', '&#62;'),
  (s) => s.replaceAll('&', '&#x26;').replaceAll('<', '&#X3C;').replaceAll('>', '&#x3e;'),
  (s) => s.replaceAll('&', '&AMP;').replaceAll('<', '&LT;').replaceAll('>', '&GT;'),
  // Legacy references with no semicolon, which browsers still decode.
  (s) => s.replaceAll('&', '&amp').replaceAll('<', '&lt').replaceAll('>', '&gt'),
  (s) => s.replaceAll('&', '&#0038;'),
  // Only the ampersands: an entity escaped once more.
  (s) => s.replaceAll('&', '&amp;'),
  // A letter of every entity's name escaped: "&lt;" → "&l&#116;;", a nesting no ampersand run collapses.
  (s) => s.replace(/&([a-z])([a-z]+);/gi, (_m, a: string, b: string) => `&${a}&#${b.charCodeAt(0)};${b.slice(1)};`),
  // The "#" of every numeric reference escaped: "&#60;" → "&&#35;60;", another nesting with no ampersand run.
  (s) => s.replaceAll('#', '&#35;'),
  // A tag split by an empty one.
  (s) => s.replace(/<([a-z])/gi, '<$1<b></b>'),
];
const escaped = fc
  .tuple(payload, fc.array(fc.nat(ESCAPERS.length - 1), { maxLength: 40 }), fc.constantFrom('', 'Family day: ', '<p>'))
  .map(([p, levels, lead]) => levels.reduce((s, i) => ESCAPERS[i]!(s), lead + p));

describe('plainText at any nesting depth of escaping', () => {
  test('the observed case: four levels of escaping is no longer a live tag', () => {
    const esc = ESCAPERS[0]!;
    for (const live of ['<img src=x onerror=alert(1)>Family day', '<script>alert(1)</script>Family day']) {
      let s = live;
      for (let depth = 0; depth <= 12; depth++, s = esc(s)) assert.equal(plainText(s), 'Family day', `depth ${depth}`);
    }
  });

  test('no tag or entity survives', () => {
    fc.assert(
      fc.property(escaped, (s) => assertPlain('plainText', plainText(s))),
      { interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, numRuns: 100_000 },
    );
  });
});

describe('normalizeEvent and every output format', () => {
  const registry = parseRegistry(
    {
      sources: [
        {
          id: 'fuzz',
          url: 'fuzz.ics',
          format: 'ical',
          organizer: { name: 'Fuzz Library', url: 'https://fuzz.example' },
          default_venue: 'sfpl-main',
          destination: 'san-francisco',
          attribution: 'Fuzz',
        },
      ],
    },
    '(test)',
  );
  const window = buildWindow(new Date('2026-11-21T17:00:00Z'));
  const ctx = sourceContext(registry, registry.sources[0]!, bundledGazetteer(), window);
  const start = parseUpstreamTime('2026-11-28T10:00:00', 'America/Los_Angeles')!;
  const task = { webBaseUrl: WEB, attribution: { text: 'Family events data', url: WEB } } as SearchTask;
  const links: FeedLinks = { url: 'https://api.example/v1/feed.rss', params: [], updated: '2026-11-21T08:00:00.000Z' };
  const page = { total: 1, limit: 20, offset: 0, nextOffset: null, truncated: false };

  const item = fc.record({
    title: escaped,
    description: fc.option(escaped),
    summary: fc.option(escaped),
    location: fc.option(escaped),
    organizerName: fc.option(escaped),
    priceText: fc.option(escaped),
    category: escaped,
  });

  /** Every text field a consumer reads from each format, decoded as that format's own parser does. */
  async function formats(row: EventRow): Promise<[string, string][]> {
    const r = toRecord({ ...row, created_ms: 0, updated_ms: 0 }, WEB);
    const out: [string, string][] = [];
    let text = '';
    let inItem = false;
    const sax = new SaxesParser();
    sax.on('opentag', (n) => {
      text = '';
      if (n.name === 'item') inItem = true;
    });
    sax.on('text', (t) => (text += t));
    sax.on('cdata', (t) => (text += t));
    sax.on('closetag', (n) => {
      if (inItem && ['title', 'description', 'category'].includes(n.name)) out.push([`rss ${n.name}`, text]);
    });
    sax.write(rssBody(task, links, [r], page).toString('utf8')).close();
    const feed = JSON.parse(jsonFeedBody(task, links, [r], page).toString('utf8')) as { items: Record<string, unknown>[] };
    for (const [k, v] of Object.entries(feed.items[0]!)) if (typeof v === 'string' && !k.includes('url') && k !== 'id') out.push([`json feed ${k}`, v]);
    const [header, cells] = parseCsv(await csvBatch([r], true), { relax_column_count: false });
    for (const [i, name] of header!.entries()) if (!/url|_datetime|^id$/.test(name)) out.push([`csv ${name}`, cells![i]!]);
    const ics = new ICAL.Component(
      ICAL.parse(icsBody([r], { name: 'Fuzz', url: 'https://api.example/v1/feed.ics', stamp: '2026-11-21T08:00:00Z' }).toString('utf8')) as unknown[],
    );
    for (const ve of ics.getAllSubcomponents('vevent')) {
      for (const p of ['summary', 'description', 'location', 'categories'])
        for (const v of ve.getFirstProperty(p)?.getValues() ?? []) out.push([`ics ${p}`, String(v)]);
    }
    return out;
  }

  test('no tag or entity in title, description, summary, venue, organizer, price note, tags, nor in JSON, RSS, JSON Feed, CSV or iCalendar', async () => {
    let rows = 0;
    await fc.assert(
      fc.asyncProperty(item, async (it) => {
        const raw: RawEvent = {
          ...emptyRaw(),
          uid: 'u1',
          start,
          title: it.title,
          description: it.description,
          summary: it.summary,
          location: it.location,
          organizerName: it.organizerName,
          priceText: it.priceText,
          categories: [it.category],
        };
        const row = normalizeEvent(raw, ctx);
        if (typeof row === 'string') return;
        rows++;
        for (const f of ['title', 'description', 'summary', 'venue_name', 'organizer', 'price_note'] as const) assertPlain(f, row[f]);
        for (const t of row.tags) assertPlain('tag', t);
        const rec = toRecord({ ...row, created_ms: 0, updated_ms: 0 }, WEB);
        for (const [f, v] of [
          ['venue.name', rec.venue.name],
          ['price.note', rec.price?.note],
        ] as const)
          assertPlain(`record ${f}`, v);
        for (const [where, v] of await formats(row)) assertPlain(where, v);
      }),
      { interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false, numRuns: 100_000 },
    );
    assert.ok(rows > 0, 'some items became records');
  });
});
