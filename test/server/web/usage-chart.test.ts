// The dashboard's usage chart, read back with a real HTML parser (htmlparser2) and checked against
// an oracle written here: random months of usage, with days missing, days outside the month and
// counts from zero to billions. The table must hold exactly the month's days with the input's
// numbers and the right totals; every bar must stand on the axis at a height proportional to its
// value, inside the plot; the y axis must run from 0 to the smallest 1/2/5 × 10ⁿ that fits; the SVG
// must be one named image pointing at the table, with no inline style (the CSP would drop it) and no
// NaN anywhere. Where chromium is installed, the chart is also loaded under the site's real CSP and
// stylesheet and checked by axe-core against WCAG 2.2 A/AA.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import fc from 'fast-check';
import { DomUtils, parseDocument } from 'htmlparser2';
import { html } from '../../../server/web/html.ts';
import { renderPage, SECURITY_HEADERS, type Site } from '../../../server/web/layout.ts';
import { usageChart, type UsageDay } from '../../../server/web/pages/usage-chart.ts';
import { browserSkip, launchBrowser, screenshot, type TestBrowser } from './browser.ts';

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<typeof DomUtils.findAll>[number];

const parse = (text: string): Doc => parseDocument(text, { lowerCaseTags: true, lowerCaseAttributeNames: true, xmlMode: false });
const all = (root: Doc | El, pred: (e: El) => boolean): El[] => DomUtils.findAll(pred, root.children);
const byTag = (root: Doc | El, tag: string): El[] => all(root, (e) => e.name === tag);
const text = (e: El | Doc): string => DomUtils.textContent(e);
const attr = (e: El, name: string): string | undefined => DomUtils.getAttributeValue(e, name);
const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();
const hasClass = (e: El, c: string): boolean => (attr(e, 'class') ?? '').split(/\s+/).includes(c);
const children = (e: El): El[] => e.children.filter((c): c is El => c.type === 'tag');

/** A numeric attribute, which must be present and a finite number. */
function num(e: El, name: string): number {
  const v = attr(e, name);
  assert.ok(v !== undefined, `<${e.name}> has ${name}`);
  const n = Number(v);
  assert.ok(v.trim() !== '' && Number.isFinite(n), `<${e.name} ${name}="${v}"> is a finite number`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// The oracle

const pad2 = (n: number): string => String(n).padStart(2, '0');
const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();
const isoDay = (year: number, month: number, day: number): string => new Date(Date.UTC(year, month - 1, day)).toISOString().slice(0, 10);
/** "Mon, Dec 1", by Intl rather than the module's own tables. */
const ROW_LABEL = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', weekday: 'short', month: 'short', day: 'numeric' });
const rowLabel = (date: string): string => ROW_LABEL.format(new Date(`${date}T12:00:00Z`));
const monthName = (year: number, month: number): string =>
  new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(new Date(Date.UTC(year, month - 1, 15)));

/** 1, 2, 5, 10, 20, 50, … written out as decimal literals, so no float arithmetic can creep in. */
const NICE = Array.from({ length: 17 }, (_, e) => [1, 2, 5].map((m) => Number(`${m}e${e}`))).flat();
const niceMax = (largest: number): number => NICE.find((n) => n >= Math.max(1, largest)) ?? Number.NaN;

/** "2.5M" → 2500000: the axis labels read back the way a person reads them. */
function readAxisLabel(label: string): number {
  const m = /^([\d.,]+)([KMBT]?)$/.exec(label);
  assert.ok(m, `axis label "${label}"`);
  const scale = { '': 1, K: 1e3, M: 1e6, B: 1e9, T: 1e12 }[m[2] as '' | 'K' | 'M' | 'B' | 'T'];
  return Math.round(Number(m[1]!.replaceAll(',', '')) * scale);
}

interface Month {
  readonly year: number;
  readonly month: number;
  readonly days: readonly UsageDay[];
  /** The plan's monthly record limit; absent or null: none. */
  readonly limit?: number | null;
}

interface Expected {
  readonly dates: readonly string[];
  readonly records: readonly number[];
  readonly requests: readonly number[];
  /** Records from the 1st through each day. */
  readonly soFar: readonly number[];
}

function expectedOf(m: Month): Expected {
  const n = daysInMonth(m.year, m.month);
  const dates = Array.from({ length: n }, (_, i) => `${m.year}-${pad2(m.month)}-${pad2(i + 1)}`);
  const byDate = new Map(m.days.map((d) => [d.date, d]));
  const records = dates.map((d) => byDate.get(d)?.records ?? 0);
  let sum = 0;
  return {
    dates,
    records,
    requests: dates.map((d) => byDate.get(d)?.requests ?? 0),
    soFar: records.map((r) => (sum += r)),
  };
}

const render = (m: Month): string =>
  usageChart({
    days: m.days,
    periodStart: `${m.year}-${pad2(m.month)}-01`,
    periodEnd: `${m.year}-${pad2(m.month)}-${pad2(daysInMonth(m.year, m.month))}`,
    ...(m.limit === undefined ? {} : { limit: m.limit }),
  }).text;

const countArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 9 }),
  fc.integer({ min: 0, max: 5_000 }),
  fc.integer({ min: 0, max: 9_999_999 }),
  fc.integer({ min: 0, max: 4_000_000_000 }),
);

/** A month with some of its days reported, plus days of the months either side and junk, shuffled. */
const monthArb: fc.Arbitrary<Month> = fc
  .record({ year: fc.integer({ min: 1999, max: 2100 }), month: fc.integer({ min: 1, max: 12 }) })
  .chain(({ year, month }) => {
    const n = daysInMonth(year, month);
    const inside = fc.uniqueArray(fc.record({ day: fc.integer({ min: 1, max: n }), records: countArb, requests: countArb }), {
      selector: (d) => d.day,
      maxLength: n,
    });
    // Day offsets from the 1st: before it, or past the month's end.
    const outside = fc.array(
      fc.record({ offset: fc.oneof(fc.integer({ min: -40, max: 0 }), fc.integer({ min: n + 1, max: n + 40 })), records: countArb, requests: countArb }),
      {
        maxLength: 5,
      },
    );
    const junk = fc.array(fc.constantFrom('', 'not a date', `${year}-${month}-1`, `${year}-${pad2(month)}-1`, `${year}-${pad2(month)}-00`), { maxLength: 2 });
    return fc.tuple(inside, outside, junk).chain(([ins, outs, junks]) => {
      const days: UsageDay[] = [
        ...ins.map((d) => ({ date: isoDay(year, month, d.day), records: d.records, requests: d.requests })),
        ...outs.map((d) => ({ date: isoDay(year, month, d.offset), records: d.records, requests: d.requests })),
        ...junks.map((date) => ({ date, records: 7, requests: 7 })),
      ];
      return fc
        .tuple(fc.shuffledSubarray(days, { minLength: days.length, maxLength: days.length }), fc.option(fc.integer({ min: 1, max: 4_000_000_000 })))
        .map(([shuffled, limit]) => ({ year, month, days: shuffled, limit }));
    });
  });

// ---------------------------------------------------------------------------------------------
// The checks

/** Everything the fragment must be, whatever the month. Returns the document for further checks. */
function assertChart(page: string, m: Month): Doc {
  const exp = expectedOf(m);
  const n = exp.dates.length;
  const name = monthName(m.year, m.month);
  const doc = parse(page);

  // Nothing the CSP would drop, nothing that runs, nothing that is not a number where one belongs.
  assert.equal(byTag(doc, 'style').length, 0, 'no <style> element');
  assert.equal(byTag(doc, 'script').length, 0, 'no <script>');
  for (const e of all(doc, () => true)) {
    for (const [k, v] of Object.entries(e.attribs)) {
      assert.notEqual(k, 'style', `style attribute on <${e.name}>`);
      assert.ok(!k.startsWith('on'), `${k} on <${e.name}>`);
      assert.ok(!/NaN|Infinity|undefined/.test(v), `<${e.name} ${k}="${v}">`);
    }
  }
  assert.ok(!/NaN|Infinity|undefined/.test(text(doc)), 'no NaN, Infinity or undefined in the text');
  const ids = all(doc, (e) => attr(e, 'id') !== undefined).map((e) => attr(e, 'id')!);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');

  // A figure holding one named SVG image that sends the reader to the table.
  const top = doc.children.filter((c): c is El => c.type === 'tag');
  assert.deepEqual(
    top.map((e) => e.name),
    ['figure', 'table'],
    'a figure, then the table',
  );
  const [figure, table] = top as [El, El];
  const svgs = byTag(figure, 'svg');
  assert.equal(svgs.length, 1, 'one svg in the figure');
  const svg = svgs[0]!;
  assert.equal(attr(svg, 'role'), 'img');
  const labelIds = (attr(svg, 'aria-labelledby') ?? '').split(/\s+/).filter(Boolean);
  assert.ok(labelIds.length > 0, 'the svg is aria-labelledby something');
  const label = norm(
    labelIds
      .map((id) => {
        const target = all(doc, (e) => attr(e, 'id') === id);
        assert.equal(target.length, 1, `#${id} exists`);
        return text(target[0]!);
      })
      .join(' '),
  );
  assert.ok(label.includes(name), `the chart's name "${label}" names ${name}`);
  assert.match(label, /table below/, 'the chart says where its numbers are');
  const captions = byTag(figure, 'figcaption');
  assert.equal(captions.length, 1);
  assert.ok(norm(text(captions[0]!)).includes(name));

  // The table: the month's days in order, the input's numbers, the sums.
  const caption = byTag(table, 'caption');
  assert.equal(caption.length, 1);
  assert.ok(norm(text(caption[0]!)).includes(name), 'the caption names the month');
  const heads = byTag(byTag(table, 'thead')[0]!, 'th');
  assert.deepEqual(
    heads.map((h) => norm(text(h))),
    ['Day', 'Records', 'Requests', 'Records so far'],
  );
  for (const h of heads) assert.equal(attr(h, 'scope'), 'col');
  const rows = byTag(byTag(table, 'tbody')[0]!, 'tr');
  assert.equal(rows.length, n, 'one row per day of the month');
  rows.forEach((row, i) => {
    const [th, ...tds] = children(row);
    assert.equal(th?.name, 'th');
    assert.equal(attr(th, 'scope'), 'row');
    const time = byTag(th, 'time');
    assert.equal(time.length, 1);
    assert.equal(attr(time[0]!, 'datetime'), exp.dates[i], `row ${i + 1} is ${exp.dates[i]}`);
    assert.equal(norm(text(th)), rowLabel(exp.dates[i]!));
    assert.deepEqual(
      tds.map((td) => [td.name, norm(text(td))]),
      [
        ['td', exp.records[i]!.toLocaleString('en-US')],
        ['td', exp.requests[i]!.toLocaleString('en-US')],
        ['td', exp.soFar[i]!.toLocaleString('en-US')],
      ],
      `numbers on ${exp.dates[i]}`,
    );
  });
  const foot = byTag(byTag(table, 'tfoot')[0]!, 'tr');
  assert.equal(foot.length, 1, 'one total row');
  const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
  assert.deepEqual(
    children(foot[0]!).map((c) => norm(text(c))),
    ['Total', sum(exp.records).toLocaleString('en-US'), sum(exp.requests).toLocaleString('en-US'), sum(exp.records).toLocaleString('en-US')],
  );
  assert.equal(attr(children(foot[0]!)[0]!, 'scope'), 'row');

  // No viewBox: it would scale the text with the chart (about 7 px on a phone). Horizontal
  // positions are shares of the width, vertical ones CSS pixels of the SVG's fixed height.
  assert.equal(attr(svg, 'viewbox'), undefined, 'no viewBox');
  const height = num(svg, 'height');
  for (const e of all(svg, (el) => ['rect', 'line'].includes(el.name))) {
    for (const k of ['x', 'x1', 'x2', 'width'])
      if (attr(e, k) !== undefined) assert.ok(share(e, k) >= 0 && share(e, k) <= 100.01, `<${e.name} ${k}> within the width`);
    for (const k of ['y', 'y1', 'y2']) if (attr(e, k) !== undefined) assert.ok(num(e, k) >= 0 && num(e, k) <= height, `<${e.name} ${k}> within the height`);
  }

  // Two charts, records above requests, each with its own scale.
  const panels = all(svg, (e) => e.name === 'g' && hasClass(e, 'usage-chart-panel'));
  assert.deepEqual(
    panels.map((g) => attr(g, 'data-series')),
    ['records', 'requests'],
    'a records chart, then a requests chart',
  );
  const limit = m.limit ?? null;
  const total = exp.soFar.at(-1) ?? 0;
  const recordsPanel = assertPanel(panels[0]!, 'usage-chart-records', exp.soFar, 'records');
  const requestsPanel = assertPanel(panels[1]!, 'usage-chart-requests', exp.requests, 'requests');
  assert.ok(requestsPanel.top > recordsPanel.bottom, 'the requests chart is below the records chart');
  assert.equal(requestsPanel.max, niceMax(Math.max(0, ...exp.requests)), 'the requests scale is the smallest nice number over the largest day');
  assert.ok(recordsPanel.max >= total && NICE.includes(recordsPanel.max), `the records scale (${recordsPanel.max}) is nice and holds the month's ${total}`);
  if (limit === null) {
    assert.equal(recordsPanel.max, niceMax(total), 'without a limit, the records scale is the smallest nice number over the total');
    assert.equal(all(svg, (e) => hasClass(e, 'usage-chart-limit')).length, 0, 'no limit line without a limit');
  } else {
    assert.ok(recordsPanel.max >= limit, `the records scale (${recordsPanel.max}) reaches the limit ${limit}`);
    assertLimit(svg, recordsPanel, limit);
  }

  // Day-of-month labels under both: in order, starting on the 1st, never closer than 4 days.
  const xLabels = all(svg, (e) => e.name === 'text' && e.parent !== null && hasClass(e.parent as El, 'usage-chart-x'));
  assert.ok(xLabels.length >= Math.min(n, 5), `enough day labels (${xLabels.length})`);
  assert.equal(norm(text(xLabels[0]!)), '1');
  for (let i = 1; i < xLabels.length; i++) {
    assert.ok(Number(text(xLabels[i]!)) - Number(text(xLabels[i - 1]!)) >= 4, 'day labels at least 4 days apart');
    assert.ok(share(xLabels[i]!, 'x') > share(xLabels[i - 1]!, 'x'), 'day labels run left to right');
  }
  for (const t of xLabels) {
    const day = Number(text(t));
    assert.ok(day >= 1 && day <= n);
    assert.ok(Math.abs(share(t, 'x') - ((day - 0.5) / n) * 100) <= 0.01, `day ${day} sits under its bars`);
    assert.ok(num(t, 'y') > requestsPanel.bottom && num(t, 'y') <= height, 'day labels under the charts');
  }
  return doc;
}

/** A percentage attribute ("12.5%" → 12.5); a plain 0 counts as 0%. */
function share(e: El, name: string): number {
  const v = attr(e, name) ?? '';
  if (v === '0') return 0;
  assert.match(v, /^\d+(?:\.\d+)?%$/, `<${e.name} ${name}="${v}"> is a share of the width`);
  return Number(v.slice(0, -1));
}

interface PanelScale {
  readonly top: number;
  readonly bottom: number;
  readonly max: number;
}

/**
 * One chart: its scale (0 on its axis, a nice maximum at the top, even steps, a label per tick
 * read back as its value, hanging left of the plot) and a bar per value, in date order, standing
 * on the axis at a height proportional to the value.
 */
function assertPanel(panel: El, series: string, values: readonly number[], name: string): PanelScale {
  const axis = all(panel, (e) => e.name === 'line' && hasClass(e, 'usage-chart-axis'));
  assert.equal(axis.length, 1, `one axis for ${name}`);
  const bottom = num(axis[0]!, 'y1');
  assert.equal(num(axis[0]!, 'y2'), bottom, 'the axis is level');
  assert.equal(share(axis[0]!, 'x1'), 0);
  assert.equal(share(axis[0]!, 'x2'), 100);
  const gridLines = all(panel, (e) => e.name === 'line' && attr(e, 'data-value') !== undefined);
  const tickValues = gridLines.map((l) => num(l, 'data-value')).sort((a, b) => a - b);
  assert.equal(tickValues[0], 0, `the ${name} scale starts at 0`);
  const max = tickValues.at(-1)!;
  assert.ok(tickValues.length >= 2 && tickValues.length <= 6, `a few ticks: ${tickValues.join(', ')}`);
  const step = tickValues[1]!;
  tickValues.forEach((v, i) => assert.equal(v, i * step, `even steps: ${tickValues.join(', ')}`));
  const yOf = new Map(gridLines.map((l) => [num(l, 'data-value'), num(l, 'y1')]));
  const top = yOf.get(max)!;
  assert.ok(top < bottom, 'the plot has height');
  const plotHeight = bottom - top;
  for (const [v, y] of yOf) assert.ok(Math.abs(y - (bottom - (v / max) * plotHeight)) <= 0.01, `the ${v} line sits at its height`);
  const tickTexts = all(panel, (e) => e.name === 'text' && attr(e, 'data-value') !== undefined);
  assert.deepEqual(
    tickTexts.map((t) => num(t, 'data-value')).sort((a, b) => a - b),
    tickValues,
    'a label per tick',
  );
  for (const t of tickTexts) {
    assert.equal(readAxisLabel(norm(text(t))), num(t, 'data-value'), `the label "${norm(text(t))}" reads as its value`);
    assert.ok(num(t, 'x') < 0 && attr(t, 'text-anchor') === 'end', 'tick labels end left of the plot');
  }
  const days = all(panel, (e) => e.name === 'g' && attr(e, 'data-date') !== undefined);
  assert.equal(days.length, values.length, `a ${name} bar per day`);
  let lastX = -Infinity;
  days.forEach((g, i) => {
    const bars = all(g, (e) => e.name === 'rect' && hasClass(e, series));
    assert.equal(bars.length, 1, `one ${name} bar on ${attr(g, 'data-date')}`);
    const bar = bars[0]!;
    const value = values[i]!;
    assert.equal(num(bar, 'data-value'), value);
    const [x, y, w, h] = [share(bar, 'x'), num(bar, 'y'), share(bar, 'width'), num(bar, 'height')];
    assert.ok(Math.abs(h - (value / max) * plotHeight) <= 0.011, `${name} ${value} of ${max}: height ${h} of ${plotHeight}`);
    assert.ok(Math.abs(y + h - bottom) <= 0.011, `${name} on day ${i + 1} stands on the axis`);
    assert.ok(h >= 0 && y >= top - 0.01, `${name} on day ${i + 1} stays below the top of the plot`);
    assert.ok(w > 0 && x >= 0 && x + w <= 100.01, `${name} on day ${i + 1} stays within the width`);
    assert.ok(Math.abs(x + w / 2 - ((i + 0.5) / values.length) * 100) <= 0.01, `${name} on day ${i + 1} is centred on its day`);
    assert.ok(x >= lastX, 'bars run left to right in date order');
    lastX = x + w - 0.01;
  });
  return { top, bottom, max };
}

/** The dashed line at the plan's limit: across the records plot at its height, labelled above it, inside the plot. */
function assertLimit(svg: El, p: PanelScale, limit: number): void {
  const g = all(svg, (e) => e.name === 'g' && hasClass(e, 'usage-chart-limit'));
  assert.equal(g.length, 1, 'one limit line');
  assert.equal(num(g[0]!, 'data-value'), limit);
  const [line] = byTag(g[0]!, 'line');
  assert.ok(line);
  const y = p.bottom - (limit / p.max) * (p.bottom - p.top);
  assert.ok(Math.abs(num(line, 'y1') - y) <= 0.01 && num(line, 'y2') === num(line, 'y1'), `the limit ${limit} of ${p.max} at y ${y}: ${attr(line, 'y1')}`);
  assert.equal(share(line, 'x1'), 0);
  assert.equal(share(line, 'x2'), 100);
  const [label] = byTag(g[0]!, 'text');
  assert.ok(label);
  assert.equal(norm(text(label)), `Monthly limit: ${limit.toLocaleString('en-US')} records`);
  assert.ok(num(label, 'y') < num(line, 'y1') && num(label, 'y') - 14 >= p.top - 0.01, 'the label sits above the line, inside the plot');
}

// ---------------------------------------------------------------------------------------------

describe('usageChart', () => {
  test('a random month: the table is the oracle, the bars are to scale, the SVG is a named image with no inline style', () => {
    fc.assert(
      fc.property(monthArb, (m) => {
        assertChart(render(m), m);
      }),
      { numRuns: 100 },
    );
  });

  test('an all-zero month renders: every day 0, a 0–1 scale on both charts, flat bars', () => {
    const m: Month = { year: 2024, month: 2, days: [] };
    const doc = assertChart(render(m), m);
    const rows = byTag(byTag(doc, 'tbody')[0]!, 'tr');
    assert.equal(rows.length, 29, 'February 2024 has 29 days');
    for (const r of rows)
      assert.deepEqual(
        byTag(r, 'td').map((td) => text(td)),
        ['0', '0', '0'],
      );
    const ticks = all(doc, (e) => e.name === 'text' && attr(e, 'data-value') !== undefined).map((t) => norm(text(t)));
    assert.deepEqual(ticks, ['0', '1', '0', '1']);
    for (const bar of all(doc, (e) => e.name === 'rect' && attr(e, 'data-value') !== undefined)) assert.equal(attr(bar, 'height'), '0');
  });

  test('millions: each axis reads in round steps on its own scale and the table has every digit', () => {
    const m: Month = {
      year: 2025,
      month: 12,
      days: [
        { date: '2025-12-03', records: 3_456_789, requests: 1_234 },
        { date: '2025-12-31', records: 12, requests: 2_000_001 },
      ],
    };
    const doc = assertChart(render(m), m);
    const ticks = (series: string): string[] =>
      all(doc, (e) => e.name === 'text' && attr(e, 'data-value') !== undefined && attr(e.parent as El, 'data-series') === series).map((t) => norm(text(t)));
    assert.deepEqual(ticks('records'), ['0', '1M', '2M', '3M', '4M', '5M']);
    assert.deepEqual(ticks('requests'), ['0', '1M', '2M', '3M', '4M', '5M']);
    const rows = byTag(byTag(doc, 'tbody')[0]!, 'tr');
    assert.deepEqual(
      byTag(rows[2]!, 'td').map((td) => text(td)),
      ['3,456,789', '1,234', '3,456,789'],
    );
    assert.deepEqual(
      byTag(byTag(doc, 'tfoot')[0]!, 'td').map((td) => text(td)),
      ['3,456,801', '2,001,235', '3,456,801'],
    );
  });

  test('days outside the period are ignored; a day listed twice counts both parts', () => {
    const out = usageChart({
      days: [
        { date: '2025-11-30', records: 900, requests: 900 },
        { date: '2025-12-02', records: 5, requests: 1 },
        { date: '2025-12-02', records: 6, requests: 2 },
        { date: '2026-01-01', records: 900, requests: 900 },
      ],
      periodStart: '2025-12-01',
      periodEnd: '2025-12-31',
    }).text;
    const doc = parse(out);
    const rows = byTag(byTag(doc, 'tbody')[0]!, 'tr');
    assert.equal(rows.length, 31);
    assert.deepEqual(
      byTag(rows[1]!, 'td').map((td) => text(td)),
      ['11', '3', '11'],
    );
    assert.deepEqual(
      byTag(byTag(doc, 'tfoot')[0]!, 'td').map((td) => text(td)),
      ['11', '3', '11'],
    );
  });

  test('through today: the table lists the days so far and totals them; the running total stops today, the axis keeps the whole month', () => {
    const days = [
      { date: '2025-12-01', records: 2, requests: 1 },
      { date: '2025-12-09', records: 7, requests: 3 },
    ];
    const doc = parse(usageChart({ days, periodStart: '2025-12-01', periodEnd: '2025-12-31', through: '2025-12-09' }).text);
    const rows = byTag(byTag(doc, 'tbody')[0]!, 'tr');
    assert.deepEqual(
      rows.map((r) => byTag(r, 'time')[0]?.attribs.datetime),
      Array.from({ length: 9 }, (_, i) => `2025-12-0${i + 1}`),
    );
    assert.deepEqual(
      byTag(byTag(doc, 'tfoot')[0]!, 'td').map((td) => text(td)),
      ['9', '4', '9'],
    );
    const bars = (d: Doc, series: string): El[] => all(d, (e) => e.name === 'rect' && hasClass(e, series));
    assert.equal(bars(doc, 'usage-chart-records').length, 9, 'the running total is drawn through today, not repeated into days to come');
    assert.equal(bars(doc, 'usage-chart-requests').length, 31, 'requests keep the whole month (zeros after today)');
    assert.equal(all(doc, (e) => e.name === 'text' && hasClass(e.parent as El, 'usage-chart-x')).at(-1)?.children.length, 1);
    const full = parse(usageChart({ days, periodStart: '2025-12-01', periodEnd: '2025-12-31' }).text);
    assert.equal(bars(full, 'usage-chart-records').length, 31, 'without today, every day of the month');
  });

  test('counts that are not counts (NaN, Infinity, negative) draw and read as zero rather than breaking the SVG', () => {
    const out = usageChart({
      days: [
        { date: '2025-12-01', records: Number.NaN, requests: Number.POSITIVE_INFINITY },
        { date: '2025-12-02', records: -5, requests: 4 },
      ],
      periodStart: '2025-12-01',
      periodEnd: '2025-12-31',
    }).text;
    assert.ok(!/NaN|Infinity/.test(out));
    const doc = parse(out);
    assert.deepEqual(
      byTag(byTag(doc, 'tfoot')[0]!, 'td').map((td) => text(td)),
      ['0', '4', '0'],
    );
  });

  test('a Community month: records so far on their own axis under a dashed line at the limit of 25, requests on another', () => {
    const m: Month = {
      year: 2025,
      month: 12,
      limit: 25,
      days: [
        { date: '2025-12-02', records: 10, requests: 140 },
        { date: '2025-12-05', records: 5, requests: 60 },
        { date: '2025-12-09', records: 3, requests: 12 },
      ],
    };
    const doc = assertChart(render(m), m);
    const svg = byTag(doc, 'svg')[0]!;
    const panel = (series: string): El => all(svg, (e) => hasClass(e, 'usage-chart-panel') && attr(e, 'data-series') === series)[0]!;
    const ticks = (series: string): number[] =>
      all(panel(series), (e) => e.name === 'line' && attr(e, 'data-value') !== undefined).map((l) => num(l, 'data-value'));
    // 18 records fit a 0–20 scale, but the limit of 25 needs room for its label: 0–50.
    assert.deepEqual(ticks('records'), [0, 10, 20, 30, 40, 50]);
    assert.deepEqual(ticks('requests'), [0, 50, 100, 150, 200]);
    const line = byTag(all(svg, (e) => hasClass(e, 'usage-chart-limit'))[0]!, 'line')[0]!;
    const y = (series: string, v: number): number => num(all(panel(series), (e) => e.name === 'line' && attr(e, 'data-value') === String(v))[0]!, 'y1');
    assert.equal(num(line, 'y1'), (y('records', 20) + y('records', 30)) / 2, 'the limit line halfway between 20 and 30');
    const titles = all(svg, (e) => hasClass(e, 'usage-chart-title')).map((t) => norm(text(t)));
    assert.deepEqual(titles, ['Records so far this month', 'Requests per day']);
    const caption = norm(text(byTag(doc, 'figcaption')[0]!));
    assert.match(caption, /Records delivered so far count against your monthly limit of 25 \(the dashed line\); requests do not\./);
    // The 9th's running total is the month's 18.
    const ninth = all(panel('records'), (e) => e.name === 'g' && attr(e, 'data-date') === '2025-12-09')[0]!;
    assert.equal(num(byTag(ninth, 'rect')[0]!, 'data-value'), 18);
  });

  test('a plan without a limit: no limit line, and the caption says so', () => {
    const m: Month = { year: 2025, month: 11, limit: null, days: [{ date: '2025-11-03', records: 70, requests: 4 }] };
    const doc = assertChart(render(m), m);
    assert.equal(all(doc, (e) => hasClass(e, 'usage-chart-limit')).length, 0);
    assert.match(norm(text(byTag(doc, 'figcaption')[0]!)), /no monthly limit/);
  });

  test('a period that is not days of one month is refused', () => {
    const days: UsageDay[] = [];
    assert.throws(() => usageChart({ days, periodStart: '2025-02-01', periodEnd: '2025-02-30' }), RangeError);
    assert.throws(() => usageChart({ days, periodStart: '2025-12-01', periodEnd: '2026-01-31' }), RangeError);
    assert.throws(() => usageChart({ days, periodStart: '2025-12-31', periodEnd: '2025-12-01' }), RangeError);
    assert.throws(() => usageChart({ days, periodStart: '12/01/2025', periodEnd: '2025-12-31' }), RangeError);
  });
});

// ---------------------------------------------------------------------------------------------
// In a real browser: the site's CSP and stylesheet, then axe-core.

const SITE: Site = { webBaseUrl: 'https://web.example', apiBaseUrl: 'https://web.example/api', name: 'Family Events' };
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

describe('usageChart in a real browser', { skip: browserSkip() }, () => {
  let chrome: TestBrowser;
  before(async () => {
    chrome = await launchBrowser();
  });
  after(async () => {
    await chrome?.close();
  });

  /** A dashboard-like page holding a Community month's chart, served under the site's CSP with its real stylesheet. */
  async function chartPage(): Promise<{ page: Page; blocked: string[] }> {
    const days: UsageDay[] = Array.from({ length: 9 }, (_, i) => ({ date: `2025-12-${pad2(i + 1)}`, records: (i * 7) % 4, requests: (i * 31) % 97 }));
    const main = html`<h1>Your account</h1>
<section aria-labelledby="usage-h">
<h2 id="usage-h">This month</h2>
${usageChart({ days, periodStart: '2025-12-01', periodEnd: '2025-12-31', through: '2025-12-09', limit: 25 })}
</section>`;
    const page = await chrome.context.newPage();
    const blocked: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') blocked.push(msg.text());
    });
    await page.route('https://web.example/**', (route) => {
      const { pathname } = new URL(route.request().url());
      // The page's own stylesheet, script and icon, so the only console errors left would be the CSP's.
      const STATIC: Record<string, string> = { '/static/site.css': 'text/css', '/static/site.js': 'text/javascript', '/static/favicon.svg': 'image/svg+xml' };
      const type = STATIC[pathname];
      if (type !== undefined)
        return readFile(new URL(`../../../server/web${pathname}`, import.meta.url)).then((body) => route.fulfill({ status: 200, contentType: type, body }));
      if (pathname === '/account')
        return route.fulfill({
          status: 200,
          headers: Object.fromEntries(SECURITY_HEADERS.map(([k, v]) => [k, v])),
          contentType: 'text/html; charset=utf-8',
          body: renderPage(SITE, { title: 'Your account', description: 'Your account', canonicalPath: '/account', noindex: true, script: true }, main),
        });
      return route.fulfill({ status: 404, body: '' });
    });
    // Chromium asks for /favicon.ico on its own; its 404 is not the page's doing.
    await page.route('https://web.example/favicon.ico', (route) => route.fulfill({ status: 204, body: '' }));
    return { page, blocked };
  }

  test('under the CSP the classes colour the chart, nothing is blocked, and axe finds no WCAG 2.2 A/AA violation', async () => {
    const { page, blocked } = await chartPage();
    try {
      await page.goto('https://web.example/account', { waitUntil: 'load' });
      assert.deepEqual(blocked, [], 'no console errors (a CSP violation would be one)');
      // A string, as the test's TypeScript has no DOM types: the computed paint of one bar of each series.
      const fills = await page.evaluate(`['.usage-chart-bars .usage-chart-records', '.usage-chart-bars .usage-chart-requests'].map((s) => {
        const st = getComputedStyle(document.querySelector(s));
        return [st.fill, st.stroke];
      })`);
      assert.deepEqual(fills, [
        ['rgb(11, 79, 156)', 'none'],
        ['rgb(253, 235, 217)', 'rgb(179, 89, 0)'],
      ]);
      const r = await new AxeBuilder({ page })
        .withTags(WCAG)
        .options({ resultTypes: ['violations'] })
        .analyze();
      assert.deepEqual(
        r.violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((nd) => nd.target.join(' ')).join('; ')}`),
        [],
      );
      assert.ok(r.passes.length > 10, `axe checked ${r.passes.length} rules`);
    } finally {
      await page.close();
    }
  });
  for (const [name, width, height] of [
    ['phone', 390, 844],
    ['desktop', 1366, 900],
  ] as const) {
    test(`at ${width}×${height}: every label of the chart is drawn at 12 CSS px or more, none overlap, none leave the screen`, async () => {
      const { page, blocked } = await chartPage();
      try {
        await page.setViewportSize({ width, height });
        await page.goto('https://web.example/account', { waitUntil: 'load' });
        assert.deepEqual(blocked, [], 'no console errors');
        // Each label's size as drawn: its computed font size times the SVG's scale on screen (a
        // viewBox scales text with the chart, which getComputedStyle alone does not show), and its box.
        const labels = await page.evaluate<
          { text: string; px: number; left: number; right: number; top: number; bottom: number; h: number }[]
        >(`[...document.querySelectorAll('figure.usage-chart svg text')].map((t) => {
          const r = t.getBoundingClientRect();
          return { text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a, left: r.left, right: r.right, top: r.top, bottom: r.bottom, h: r.height };
        })`);
        assert.ok(labels.length > 10, `labels: ${labels.length}`);
        const small = labels.filter((l) => l.px < 12 || l.h < 12).map((l) => `"${l.text}" ${l.px.toFixed(1)} px (box ${l.h.toFixed(1)})`);
        assert.deepEqual(small, [], 'labels under 12 px');
        const off = labels.filter((l) => l.left < 0 || l.right > width).map((l) => `"${l.text}" ${l.left.toFixed(0)}–${l.right.toFixed(0)}`);
        assert.deepEqual(off, [], 'labels off screen');
        const overlaps: string[] = [];
        for (let i = 0; i < labels.length; i++)
          for (let j = i + 1; j < labels.length; j++) {
            const [a, b] = [labels[i]!, labels[j]!];
            if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps.push(`"${a.text}" and "${b.text}"`);
          }
        assert.deepEqual(overlaps, [], 'labels that overlap');
        const wide = Number(await page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(wide <= width, `no sideways scrolling: ${wide} px wide`);
        console.log(`${name}: smallest chart label ${Math.min(...labels.map((l) => l.px)).toFixed(1)} px`);
        await page.locator('figure.usage-chart').scrollIntoViewIfNeeded();
        await screenshot(page, `item13-usage-${name}`);
      } finally {
        await page.close();
      }
    });
  }
});
