// CSV exports (parks departments, spreadsheets). csv-parse reads them (4× faster than fast-csv's
// parser here; fast-csv stays the writer); a header map from the registry
// (or the usual header names) says which column is which.
import { parse } from 'csv-parse/sync';
import { parseUpstreamTime } from '../normalize/times.ts';
import { atClock, parseClockRange } from './clock.ts';
import { type RawEvent, type UpstreamTime } from '../types.ts';
import { emptyRaw, FeedFormatError, toNumber, type ParseOptions, type ParseOutput, type SkippedItem } from './types.ts';
import { fold } from '../../core/text.ts';

// Our field → header names seen in the wild (compared folded).
const DEFAULT_HEADERS: Readonly<Record<string, readonly string[]>> = {
  uid: ['id', 'uid', 'event id', 'event_id'],
  title: ['title', 'event', 'event name', 'name', 'program'],
  description: ['description', 'details', 'event description'],
  summary: ['summary', 'teaser', 'short description'],
  start: ['start', 'start date', 'start_datetime', 'starts', 'start time', 'begin', 'dtstart'],
  end: ['end', 'end date', 'end_datetime', 'ends', 'end time', 'dtend'],
  date: ['date', 'event date'],
  time: ['time', 'times'],
  location: ['location', 'venue', 'where', 'place', 'place name', 'facility'],
  address: ['address', 'street address'],
  city: ['city'],
  lat: ['lat', 'latitude'],
  lng: ['lng', 'lon', 'long', 'longitude'],
  categories: ['category', 'categories', 'type', 'tags'],
  url: ['url', 'link', 'event url', 'web page'],
  ticket_url: ['registration', 'registration url', 'register', 'tickets', 'ticket url'],
  image_url: ['image', 'image url', 'photo'],
  organizer: ['organizer', 'host', 'presented by'],
  price: ['price', 'cost', 'fee', 'fees'],
  free: ['free', 'is free'],
  ages: ['ages', 'age', 'age range', 'audience'],
  status: ['status'],
};

/** The fields a column map (registry `csv_columns`, `normalize --csv-columns`) may name. */
export const CSV_FIELDS: readonly string[] = Object.keys(DEFAULT_HEADERS);

function headerIndex(headers: readonly string[], custom: Readonly<Record<string, string>> | undefined): Map<string, number> {
  const folded = headers.map((h) => fold(h).replace(/[_\s]+/g, ' '));
  const idx = new Map<string, number>();
  for (const [field, names] of Object.entries(DEFAULT_HEADERS)) {
    const wanted = custom?.[field] !== undefined ? [custom[field]] : names;
    const i = folded.findIndex((h) => wanted.some((w) => fold(w).replace(/[_\s]+/g, ' ') === h));
    if (i >= 0) idx.set(field, i);
  }
  // An iCalendar export flattened to CSV (dtstart, dtend, summary, …): there SUMMARY is the title.
  if (!idx.has('title') && custom?.summary === undefined && folded.includes('dtstart') && idx.has('summary')) {
    idx.set('title', idx.get('summary')!);
    idx.delete('summary');
  }
  return idx;
}

const NO_TIME_OF_DAY = /^(?:all[\s-]?day|tba|tbd|various|n\/a)$/i;

/** A date-only start and a time cell: the times when they read, else the date alone (all day). */
function withTimes(day: UpstreamTime, end: UpstreamTime | null, time: string | null): [UpstreamTime, UpstreamTime | null] {
  const range = day.dateOnly && time && !NO_TIME_OF_DAY.test(time.trim()) ? parseClockRange(time) : null;
  if (!range) return [day, end];
  const endDay = end?.dateOnly ? end.at : day.at;
  return [{ at: atClock(day.at, range.start), dateOnly: false }, range.end === null ? null : { at: atClock(endDay, range.end), dateOnly: false }];
}

function splitTimeRange(time: string): [string, string | null] {
  const m = /^(.{1,20}?)\s{0,2}(?:[-–—]|to)\s{0,2}(.{1,20})$/.exec(time.trim());
  return m ? [m[1]!, m[2]!] : [time, null];
}

/**
 * The file's header row, and the pairs of a column map (field → header) naming a header it does
 * not have: `normalize --csv-columns` refuses those rather than read the field as empty.
 */
export function csvColumnsMissing(input: string, columns: Readonly<Record<string, string>>): { header: string[]; missing: [field: string, header: string][] } {
  let header: string[] = [];
  try {
    header = parse(input, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, to_line: 1 })[0] ?? [];
  } catch {
    // An unreadable header is the parser's to report.
  }
  const folded = new Set(header.map((h) => fold(h).replace(/[_\s]+/g, ' ')));
  const missing = Object.entries(columns).filter(([, h]) => !folded.has(fold(h).replace(/[_\s]+/g, ' ')));
  return { header, missing: header.length ? missing : [] };
}

export async function parseCsv(input: string, opts: ParseOptions): Promise<ParseOutput> {
  const first = input.slice(0, 1024).trimStart();
  if (first.startsWith('<') || first.startsWith('{') || first.startsWith('BEGIN:')) throw new FeedFormatError('not a CSV document');
  let rows: string[][];
  try {
    rows = parse(input, { bom: true, relax_column_count: true, skip_empty_lines: true, trim: true, max_record_size: 1_000_000 });
  } catch (err) {
    throw new FeedFormatError(`CSV syntax error: ${(err as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) return { events: [], noStart: 0 };
  const idx = headerIndex(header, opts.csvColumns);
  if (!idx.has('title') || !(idx.has('start') || idx.has('date'))) {
    throw new FeedFormatError(`CSV header lacks a title or start column (headers: ${header.slice(0, 12).join(', ')})`);
  }
  const events: RawEvent[] = [];
  const noStartItems: SkippedItem[] = [];
  for (const [position, row] of body.entries()) {
    const get = (f: string): string | null => {
      const i = idx.get(f);
      const v = i === undefined ? undefined : row[i];
      return v === undefined || v.trim() === '' ? null : v;
    };
    let start: UpstreamTime | null;
    let end: UpstreamTime | null;
    if (idx.has('start')) {
      start = parseUpstreamTime(get('start'));
      end = parseUpstreamTime(get('end'));
      if (start && idx.has('time')) [start, end] = withTimes(start, end, get('time'));
    } else {
      // Separate "Date" and "Time" columns: "11/21/2026" + "10:30 AM - 11:15 AM".
      const date = get('date');
      // "All Day", "TBA" and friends say there is no time of day: the date alone is the event.
      const time = get('time');
      const [t1, t2] = time && !NO_TIME_OF_DAY.test(time.trim()) ? splitTimeRange(time) : [null, null];
      start = date ? parseUpstreamTime(t1 ? `${date} ${t1}` : date) : null;
      end = date && t2 ? parseUpstreamTime(`${date} ${t2}`) : null;
      // "6pm-9pm" or "9:30-16:30" do not read as part of a date-time, but the date alone is still
      // the event: a time we cannot read must not lose the row.
      if (date && t1 && (!start || (t2 && !end))) {
        const day = parseUpstreamTime(date);
        const read = day ? withTimes(day, null, time) : null;
        if (read && (read[0] !== day || !start)) [start, end] = read;
      }
    }
    if (!start) {
      noStartItems.push({ position, uid: get('uid'), title: get('title') });
      continue;
    }
    const location = [get('location'), get('address'), get('city')].filter(Boolean).join(', ') || null;
    const free = get('free');
    events.push({
      ...emptyRaw(),
      uid: get('uid'),
      title: get('title') ?? '',
      description: get('description'),
      summary: get('summary'),
      start,
      end,
      location,
      lat: toNumber(get('lat')),
      lng: toNumber(get('lng')),
      categories: (get('categories') ?? '')
        .split(/[;,|]/)
        .map((c) => c.trim())
        .filter((c) => c !== ''),
      url: get('url'),
      ticketUrl: get('ticket_url'),
      imageUrl: get('image_url'),
      // An iCalendar ORGANIZER is a mailto: address, not a name, and not ours to republish.
      organizerName: /^mailto:/i.test(get('organizer') ?? '') ? null : get('organizer'),
      priceText: get('price'),
      isFree: free === null ? null : /^(?:y|yes|true|1|free)$/i.test(free.trim()),
      ages: get('ages'),
      cancelled: /^cancel+ed$/i.test(get('status') ?? ''),
    });
  }
  return { events, noStart: noStartItems.length, ...(noStartItems.length ? { noStartItems } : {}) };
}
