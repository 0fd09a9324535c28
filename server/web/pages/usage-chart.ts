// A month of API usage for the developer dashboard, as one SVG image of two small charts on a
// shared day axis, followed by the same numbers in a table. Records and requests are different
// quantities with scales often a hundredfold apart, so each has its own axis: on top, the records
// delivered so far this month (a running total), which is what the plan's monthly limit meters,
// with a dashed line at that limit; below, requests per day, which no monthly limit counts. The
// chart is for seeing the month at a glance; the table is the data for everyone (screen readers,
// keyboards, copy and paste), so the SVG is a single labelled image that points at the table.
//
// The SVG has no viewBox: a viewBox scales everything, text included, so labels sized for a desktop
// came out about 7 px on a phone. Instead, horizontal positions are percentages of the chart's
// width and vertical ones are CSS pixels of its fixed height, so text is always drawn at its CSS
// size (site.css) and only the bars' spacing follows the width. The y axis labels hang to the left
// of the plot into the figure's padding (overflow: visible). Nothing here is inline style (the CSP
// forbids it): colours and sizes come from the usage-chart-* classes in site.css.
import { html, type Html } from '../html.ts';

export interface UsageDay {
  /** YYYY-MM-DD, the Pacific calendar day. */
  readonly date: string;
  readonly records: number;
  readonly requests: number;
}

export interface UsageChartInput {
  /** Days in any order; days missing from the period count as zero, days outside it are ignored. */
  readonly days: readonly UsageDay[];
  /** YYYY-MM-DD, the first day of the month (Pacific). */
  readonly periodStart: string;
  /** YYYY-MM-DD, the last day of the same month. */
  readonly periodEnd: string;
  /**
   * YYYY-MM-DD, today: the table stops here, since later days have not happened (their zeros would
   * be claims, and a month of them buries today's row). The chart keeps the whole month's axis.
   */
  readonly through?: string;
  /**
   * The plan's monthly record limit (what the running total is metered against), or null for a
   * plan without one: the records chart draws it as a dashed line, labelled.
   */
  readonly limit?: number | null;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;
const MONTHS_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
// Indexed by Date#getUTCDay(), which counts from Sunday.
const WEEKDAYS_SHORT = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

// Vertical geometry in CSS pixels (the SVG's height is fixed); horizontal positions are
// percentages of its width. Text is 14 px (site.css), so the rows below leave room for a line of it,
// and each plot is tall enough that its five tick labels (at most) stand over 20 px apart.
const HEIGHT = 336;
/** The records chart: its title's baseline, then the plot. */
const RECORDS_TITLE_Y = 14;
const RECORDS_TOP = 30;
const RECORDS_BOTTOM = 150;
/** The requests chart, below it on the same day axis. */
const REQUESTS_TITLE_Y = 180;
const REQUESTS_TOP = 196;
const REQUESTS_BOTTOM = 306;
/** The day-of-month labels under both. */
const DAYS_Y = 328;
/** Where the y labels end, left of the plot (in the figure's padding). */
const Y_LABEL_X = -8;
/** The share of a day's slot a bar takes. */
const BAR_SHARE = 0.7;
/**
 * The dashed limit line's label sits above the line, inside the plot: the scale leaves this much of
 * the plot's height above the limit, so the label never runs into the top or the chart's title.
 */
const LIMIT_HEADROOM_PX = 20;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

interface CalendarDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

function parseDate(value: string, what: string): CalendarDay {
  const m = DATE.exec(value);
  if (m) {
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    // Date.UTC rolls 2025-02-30 over into March; a day that comes back changed never existed.
    const d = new Date(Date.UTC(year, month - 1, day));
    if (d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day) return { year, month, day };
  }
  throw new RangeError(`usageChart: ${what} ${JSON.stringify(value)} is not a calendar date (YYYY-MM-DD)`);
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * The meter only ever reports whole non-negative counts, but a NaN or an Infinity slipping through
 * would reach the SVG as "NaN" coordinates and blank the whole chart, so anything that is not a
 * usable count draws (and reads) as zero. The cap keeps the axis maximum finite.
 */
const usable = (n: number): number => (Number.isFinite(n) && n > 0 ? Math.min(n, Number.MAX_SAFE_INTEGER) : 0);

/**
 * The top of the y axis and the distance between its ticks: the smallest 1, 2 or 5 × 10ⁿ at or above
 * the month's largest value (at least 1, so an all-zero month still has a scale), split into four or
 * five steps. Steps are never below 1: counts are whole, and a tick at 0.2 requests would read as nonsense.
 */
function yScale(largest: number): { readonly max: number; readonly step: number } {
  const target = Math.max(1, largest);
  for (let magnitude = 1; ; magnitude *= 10) {
    if (magnitude >= target) return { max: magnitude, step: Math.max(1, magnitude / 5) };
    if (2 * magnitude >= target) return { max: 2 * magnitude, step: Math.max(1, magnitude / 2) };
    if (5 * magnitude >= target) return { max: 5 * magnitude, step: magnitude };
  }
}

const UNITS: readonly (readonly [number, string])[] = [
  [1e12, 'T'],
  [1e9, 'B'],
  [1e6, 'M'],
  [1e3, 'K'],
];

/** "2.5M" rather than "2,500,000": the axis labels share 52 units of margin with the tick marks. */
function axisLabel(value: number): string {
  for (const [unit, suffix] of UNITS) {
    if (value >= unit) return `${(value / unit).toLocaleString('en-US', { maximumFractionDigits: 1 })}${suffix}`;
  }
  return value.toLocaleString('en-US');
}

/** Two decimals are finer than any screen shows and keep the markup short. */
const at = (n: number): number => Math.round(n * 100) / 100;

const count = (n: number): string => n.toLocaleString('en-US');

interface Row {
  readonly date: string;
  readonly day: number;
  /** "Mon, Dec 1" */
  readonly label: string;
  readonly records: number;
  readonly requests: number;
  /** Records delivered from the 1st through this day. */
  readonly soFar: number;
}

function rowsOf(input: UsageChartInput): { readonly rows: readonly Row[]; readonly month: CalendarDay } {
  const start = parseDate(input.periodStart, 'periodStart');
  const end = parseDate(input.periodEnd, 'periodEnd');
  // The title names one month and the x axis counts days of it, so a period may not straddle two.
  if (start.year !== end.year || start.month !== end.month || start.day > end.day) {
    throw new RangeError(`usageChart: the period ${input.periodStart}..${input.periodEnd} is not a run of days within one month`);
  }
  const prefix = `${start.year}-${pad2(start.month)}-`;
  const totals = new Map<string, { records: number; requests: number }>();
  for (let day = start.day; day <= end.day; day++) totals.set(prefix + pad2(day), { records: 0, requests: 0 });
  for (const d of input.days) {
    const t = totals.get(d.date);
    if (t === undefined) continue;
    // A day listed twice is two partial counts of the same day, not a correction of the first.
    t.records = usable(t.records + usable(d.records));
    t.requests = usable(t.requests + usable(d.requests));
  }
  const rows: Row[] = [];
  let soFar = 0;
  for (let day = start.day; day <= end.day; day++) {
    const date = prefix + pad2(day);
    const t = totals.get(date) ?? { records: 0, requests: 0 };
    soFar = usable(soFar + t.records);
    const weekday = new Date(Date.UTC(start.year, start.month - 1, day)).getUTCDay();
    rows.push({ date, day, label: `${WEEKDAYS_SHORT[weekday]}, ${MONTHS_SHORT[start.month - 1]} ${day}`, ...t, soFar });
  }
  return { rows, month: start };
}

/** A share of the chart's width as an SVG length. */
const pct = (share: number): string => `${at(share * 100)}%`;

interface Panel {
  readonly top: number;
  readonly bottom: number;
  readonly max: number;
  readonly step: number;
}

const yOf = (p: Panel, value: number): number => at(p.bottom - (value / p.max) * (p.bottom - p.top));

/** Grid lines across the plot and their labels left of it; the zero line is the panel's own axis. */
function yAxis(p: Panel, series: string): Html {
  const ticks: Html[] = [];
  const n = Math.round(p.max / p.step);
  for (let i = 0; i <= n; i++) {
    const value = i * p.step;
    const y = yOf(p, value);
    ticks.push(
      html`<line class="${value === 0 ? 'usage-chart-axis' : 'usage-chart-grid'}" data-value="${value}" x1="0" x2="100%" y1="${y}" y2="${y}"></line>\n`,
      html`<text class="usage-chart-tick" data-value="${value}" x="${Y_LABEL_X}" y="${y}" dy="0.35em" text-anchor="end">${axisLabel(value)}</text>\n`,
    );
  }
  return html`<g class="usage-chart-y" data-series="${series}">\n${ticks}</g>`;
}

/** One bar per day of `rows` (a share of the day's slot, centred on it), standing on the panel's axis. */
function bar(p: Panel, rowCount: number, i: number, value: number, cls: string): Html {
  const slot = 1 / rowCount;
  const y = yOf(p, value);
  return html`<rect class="${cls}" data-value="${value}" x="${pct((i + (1 - BAR_SHARE) / 2) * slot)}" y="${y}" width="${pct(BAR_SHARE * slot)}" height="${at(p.bottom - y)}"></rect>`;
}

/**
 * The records chart: the running total of records delivered through each day that has happened,
 * and the plan's monthly limit as a dashed, labelled line.
 */
function recordsChart(rows: readonly Row[], shown: number, limit: number | null): Html {
  const delivered = rows[shown - 1]?.soFar ?? 0;
  const plotHeight = RECORDS_BOTTOM - RECORDS_TOP;
  // With a limit, the scale reaches past it far enough for the line's label to sit above it.
  const reach = limit === null ? delivered : Math.max(delivered, Math.ceil((limit * plotHeight) / (plotHeight - LIMIT_HEADROOM_PX)));
  const p: Panel = { top: RECORDS_TOP, bottom: RECORDS_BOTTOM, ...yScale(reach) };
  const groups = rows
    .slice(0, shown)
    .map(
      (r, i) =>
        html`<g data-date="${r.date}"><title>${r.label}: ${count(r.soFar)} records so far this month (${count(r.records)} that day)</title>${bar(p, rows.length, i, r.soFar, 'usage-chart-records')}</g>\n`,
    );
  const limitLine =
    limit === null
      ? ''
      : html`<g class="usage-chart-limit" data-value="${limit}">
<line x1="0" x2="100%" y1="${yOf(p, limit)}" y2="${yOf(p, limit)}"></line>
<text x="100%" y="${at(yOf(p, limit) - 6)}" text-anchor="end">Monthly limit: ${count(limit)} records</text>
</g>\n`;
  return html`<g class="usage-chart-panel" data-series="records">
<text class="usage-chart-title" x="0" y="${RECORDS_TITLE_Y}">Records so far this month</text>
${yAxis(p, 'records')}
<g class="usage-chart-bars">\n${groups}</g>
${limitLine}</g>`;
}

/** The requests chart: requests per day, on its own scale; no monthly limit counts them. */
function requestsChart(rows: readonly Row[]): Html {
  const p: Panel = { top: REQUESTS_TOP, bottom: REQUESTS_BOTTOM, ...yScale(rows.reduce((m, r) => Math.max(m, r.requests), 0)) };
  const groups = rows.map(
    (r, i) =>
      html`<g data-date="${r.date}"><title>${r.label}: ${count(r.requests)} requests</title>${bar(p, rows.length, i, r.requests, 'usage-chart-requests')}</g>\n`,
  );
  return html`<g class="usage-chart-panel" data-series="requests">
<text class="usage-chart-title" x="0" y="${REQUESTS_TITLE_Y}">Requests per day</text>
${yAxis(p, 'requests')}
<g class="usage-chart-bars">\n${groups}</g>
</g>`;
}

/**
 * Day-of-month labels under both charts: the 1st and every fifth day, which stay apart on a
 * phone-width chart (about 50 px between them at 390 px) as on a desktop.
 */
function xAxis(rows: readonly Row[]): Html {
  const labels = rows.flatMap((r, i) =>
    i === 0 || r.day % 5 === 0 ? [html`<text x="${pct((i + 0.5) / rows.length)}" y="${DAYS_Y}" text-anchor="middle">${r.day}</text>\n`] : [],
  );
  return html`<g class="usage-chart-x">\n${labels}</g>`;
}

/**
 * The chart and its table, for the dashboard's usage section. Element ids are derived from the
 * month, so the fragment can appear once per month on a page.
 */
export function usageChart(input: UsageChartInput): Html {
  const { rows, month } = rowsOf(input);
  const monthName = `${MONTHS[month.month - 1]} ${month.year}`;
  const id = `usage-chart-${month.year}-${pad2(month.month)}`;
  const limit = input.limit === undefined || input.limit === null ? null : usable(input.limit);
  const listed = input.through === undefined ? rows : rows.filter((r) => r.date <= (input.through ?? ''));
  const total = rows.reduce((t, r) => ({ records: t.records + r.records, requests: t.requests + r.requests }), { records: 0, requests: 0 });
  const tableRows = listed.map(
    (r) =>
      html`<tr><th scope="row"><time datetime="${r.date}">${r.label}</time></th><td>${count(r.records)}</td><td>${count(r.requests)}</td><td>${count(r.soFar)}</td></tr>\n`,
  );
  // What the limit meters, said in words that wrap (the SVG's own titles are kept short for a phone).
  const metered =
    limit === null
      ? 'Your plan has no monthly limit on records.'
      : `Records delivered so far count against your monthly limit of ${count(limit)} (the dashed line); requests do not.`;

  return html`<figure class="usage-chart">
<figcaption>Records and requests, ${monthName} (Pacific time) <span class="usage-chart-note">${metered}</span></figcaption>
<svg class="usage-chart-svg" role="img" aria-labelledby="${id}-title ${id}-desc" width="100%" height="${HEIGHT}">
<title id="${id}-title">Usage chart for ${monthName}; the numbers are in the table below</title>
<desc id="${id}-desc">Two bar charts on the same days: records delivered so far this month, with the monthly limit where the plan has one, and requests per day on a separate scale.</desc>
${recordsChart(rows, listed.length, limit)}
${requestsChart(rows)}
${xAxis(rows)}
</svg>
</figure>
<table class="usage-table">
<caption>Usage per day, ${monthName}</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Records</th><th scope="col">Requests</th><th scope="col">Records so far</th></tr></thead>
<tbody>
${tableRows}</tbody>
<tfoot><tr><th scope="row">Total</th><td>${count(total.records)}</td><td>${count(total.requests)}</td><td>${count(total.records)}</td></tr></tfoot>
</table>`;
}
