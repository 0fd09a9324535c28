// A month of API usage for the developer dashboard: records and requests per day drawn as an
// inline SVG bar chart, followed by the same numbers in a table. The chart is for seeing the shape
// of the month at a glance; the table is the data for everyone (screen readers, keyboards, copy and
// paste), so the SVG is a single labelled image that points at the table instead of sixty-odd bars
// to step through one by one. Nothing here is inline style (the CSP forbids it): every colour comes
// from the usage-chart-* classes in site.css, and the markup carries only geometry.
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
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;
const MONTHS_SHORT = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
// Indexed by Date#getUTCDay(), which counts from Sunday.
const WEEKDAYS_SHORT = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

// Geometry in viewBox units. The stylesheet sets the text to 12 units (16 on phones, where the
// whole chart shrinks): the margins and the label spacing below leave room for either.
const WIDTH = 640;
const HEIGHT = 276;
const PLOT_LEFT = 52;
const PLOT_RIGHT = 632;
const PLOT_TOP = 40;
const PLOT_BOTTOM = 248;
const PLOT_HEIGHT = PLOT_BOTTOM - PLOT_TOP;
/** Centre to centre, enough for two digits at 12 units with a gap, so day labels never touch. */
const MIN_LABEL_SPACING = 24;
/** A short period would otherwise get bars as wide as a column of text. */
const MAX_BAR_WIDTH = 24;

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
  for (let day = start.day; day <= end.day; day++) {
    const date = prefix + pad2(day);
    const t = totals.get(date) ?? { records: 0, requests: 0 };
    const weekday = new Date(Date.UTC(start.year, start.month - 1, day)).getUTCDay();
    rows.push({ date, day, label: `${WEEKDAYS_SHORT[weekday]}, ${MONTHS_SHORT[start.month - 1]} ${day}`, ...t });
  }
  return { rows, month: start };
}

function legend(): Html {
  const y = 10;
  return html`<g class="usage-chart-legend">
<rect class="usage-chart-records" x="${PLOT_LEFT}" y="${y}" width="12" height="12"></rect>
<text x="${PLOT_LEFT + 18}" y="${y + 11}">Records</text>
<rect class="usage-chart-requests" x="${PLOT_LEFT + 100}" y="${y}" width="12" height="12"></rect>
<text x="${PLOT_LEFT + 118}" y="${y + 11}">Requests</text>
</g>`;
}

function yAxis(max: number, step: number): Html {
  const ticks: Html[] = [];
  const n = Math.round(max / step);
  for (let i = 0; i <= n; i++) {
    const value = i * step;
    const y = at(PLOT_BOTTOM - (value / max) * PLOT_HEIGHT);
    // The zero line is the x axis and is drawn last, over the feet of the bars.
    if (value > 0) ticks.push(html`<line class="usage-chart-grid" data-value="${value}" x1="${PLOT_LEFT}" x2="${PLOT_RIGHT}" y1="${y}" y2="${y}"></line>\n`);
    ticks.push(html`<text data-value="${value}" x="${PLOT_LEFT - 8}" y="${at(y + 4)}" text-anchor="end">${axisLabel(value)}</text>\n`);
  }
  return html`<g class="usage-chart-y">\n${ticks}</g>`;
}

function bars(rows: readonly Row[], max: number): Html {
  const slot = (PLOT_RIGHT - PLOT_LEFT) / rows.length;
  const width = Math.min(slot * 0.38, MAX_BAR_WIDTH);
  const height = (v: number): number => (v / max) * PLOT_HEIGHT;
  const groups = rows.map((r, i) => {
    const centre = PLOT_LEFT + (i + 0.5) * slot;
    const hr = height(r.records);
    const hq = height(r.requests);
    // The <title> is a hover tooltip for the day; inside role="img" it is not announced, so it
    // duplicates nothing the table says to a screen reader.
    const title = html`<title>${r.label}: ${count(r.records)} records, ${count(r.requests)} requests</title>`;
    // Edges are rounded, not widths, so the pair meets exactly at the centre instead of overlapping by a rounding step.
    const [left, middle, right] = [at(centre - width), at(centre), at(centre + width)];
    const recordsBar = html`<rect class="usage-chart-records" data-value="${r.records}" x="${left}" y="${at(PLOT_BOTTOM - hr)}" width="${at(middle - left)}" height="${at(hr)}"></rect>`;
    const requestsBar = html`<rect class="usage-chart-requests" data-value="${r.requests}" x="${middle}" y="${at(PLOT_BOTTOM - hq)}" width="${at(right - middle)}" height="${at(hq)}"></rect>`;
    return html`<g data-date="${r.date}">${title}${recordsBar}${requestsBar}</g>\n`;
  });
  return html`<g class="usage-chart-bars">\n${groups}</g>`;
}

function xAxis(rows: readonly Row[]): Html {
  const slot = (PLOT_RIGHT - PLOT_LEFT) / rows.length;
  const every = Math.max(1, Math.ceil(MIN_LABEL_SPACING / slot));
  const labels = rows.flatMap((r, i) =>
    i % every === 0 ? [html`<text x="${at(PLOT_LEFT + (i + 0.5) * slot)}" y="${PLOT_BOTTOM + 18}" text-anchor="middle">${r.day}</text>\n`] : [],
  );
  return html`<line class="usage-chart-axis" data-value="0" x1="${PLOT_LEFT}" x2="${PLOT_RIGHT}" y1="${PLOT_BOTTOM}" y2="${PLOT_BOTTOM}"></line>
<g class="usage-chart-x">\n${labels}</g>`;
}

/**
 * The chart and its table, for the dashboard's usage section. Element ids are derived from the
 * month, so the fragment can appear once per month on a page.
 */
export function usageChart(input: UsageChartInput): Html {
  const { rows, month } = rowsOf(input);
  const monthName = `${MONTHS[month.month - 1]} ${month.year}`;
  const id = `usage-chart-${month.year}-${pad2(month.month)}`;
  const largest = rows.reduce((m, r) => Math.max(m, r.records, r.requests), 0);
  const { max, step } = yScale(largest);
  const total = rows.reduce((t, r) => ({ records: t.records + r.records, requests: t.requests + r.requests }), { records: 0, requests: 0 });

  const listed = input.through === undefined ? rows : rows.filter((r) => r.date <= (input.through ?? ''));
  const tableRows = listed.map(
    (r) => html`<tr><th scope="row"><time datetime="${r.date}">${r.label}</time></th><td>${count(r.records)}</td><td>${count(r.requests)}</td></tr>\n`,
  );

  return html`<figure class="usage-chart">
<figcaption>Records and requests per day, ${monthName} (Pacific time)</figcaption>
<svg class="usage-chart-svg" role="img" aria-labelledby="${id}-title" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}">
<title id="${id}-title">Bar chart of records and requests per day, ${monthName}; the numbers are in the table below</title>
${legend()}
${yAxis(max, step)}
${bars(rows, max)}
${xAxis(rows)}
</svg>
</figure>
<table class="usage-table">
<caption>Usage per day, ${monthName}</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Records</th><th scope="col">Requests</th></tr></thead>
<tbody>
${tableRows}</tbody>
<tfoot><tr><th scope="row">Total</th><td>${count(total.records)}</td><td>${count(total.requests)}</td></tr></tfoot>
</table>`;
}
