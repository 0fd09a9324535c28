// The CSV export (RFC 4180, UTF-8, CRLF, header row always), written with fast-csv in batches so a
// page of any length streams in bounded memory. Columns are the event record's fields in the JSON
// record's order, nested objects flattened with "_", lists joined with ";". Text cells that a
// spreadsheet would run as a formula are neutralized; numeric cells stay numbers.
import { format, writeToBuffer } from 'fast-csv';
import type { EventRecord, RecordBody } from './record.ts';

/**
 * Bump whenever the bytes of a CSV body change for the same rows (a column, an escape rule): a
 * streamed CSV's ETag is a digest of this version and the rows, not of the bytes themselves.
 */
export const CSV_VERSION = 4;

/** The stable column order, and what each holds (documented in the OpenAPI description). */
export const CSV_COLUMNS = [
  ['id', 'text'],
  ['title', 'text'],
  ['description', 'text'],
  ['summary', 'text'],
  ['start_datetime', 'text'],
  ['end_datetime', 'text'],
  ['venue_name', 'text'],
  ['venue_address', 'text'],
  ['venue_city', 'text'],
  ['venue_lat', 'number'],
  ['venue_lng', 'number'],
  ['venue_geo_precision', 'text'],
  ['organizer', 'text'],
  ['organizer_url', 'text'],
  ['categories', 'list'],
  ['tags', 'list'],
  ['image_url', 'text'],
  ['is_free', 'boolean'],
  ['price_min', 'number'],
  ['price_max', 'number'],
  ['price_note', 'text'],
  ['ticket_url', 'text'],
  ['source', 'text'],
  ['source_url', 'text'],
  ['destination', 'text'],
  ['age_min_months', 'number'],
  ['age_max_months', 'number'],
  ['age_min_years', 'number'],
  ['age_max_years', 'number'],
  ['is_canceled', 'boolean'],
  ['all_day', 'boolean'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
  ['event_url', 'text'],
  ['distance_km', 'number'],
] as const satisfies readonly (readonly [string, 'text' | 'number' | 'boolean' | 'list'])[];

const HEADERS = CSV_COLUMNS.map(([name]) => name);

// OWASP "CSV injection": a cell starting with one of these is run as a formula by spreadsheets.
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);

/** A text cell: null is empty, and a would-be formula gets a leading apostrophe (shown, not run). */
export function textCell(s: string | null): string {
  if (s === null) return '';
  return FORMULA_START.has(s.charAt(0)) ? `'${s}` : s;
}

const CRLF = '\r\n';

type Cell = string | number | boolean;
const num = (n: number | null | undefined): Cell => (n === null || n === undefined ? '' : n);

/**
 * A record's own cells: every column but the last two (event_url, distance_km), which depend on
 * the server's configuration and on the search. Snapshots store these rendered (records.csv).
 */
export function ownCells(r: RecordBody): Cell[] {
  return [
    textCell(r.id),
    textCell(r.title),
    textCell(r.description),
    textCell(r.summary),
    textCell(r.start_datetime),
    textCell(r.end_datetime),
    textCell(r.venue.name),
    textCell(r.venue.address),
    textCell(r.venue.city),
    r.venue.lat,
    r.venue.lng,
    textCell(r.venue.geo_precision),
    textCell(r.organizer),
    textCell(r.organizer_url),
    textCell(r.categories.join(';')),
    textCell(r.tags.join(';')),
    textCell(r.image_url),
    r.is_free,
    num(r.price?.min),
    num(r.price?.max),
    textCell(r.price?.note ?? null),
    textCell(r.ticket_url),
    textCell(r.source),
    '',
    textCell(r.destination),
    num(r.age_range?.min_months),
    num(r.age_range?.max_months),
    num(r.age_range_years?.min_years),
    num(r.age_range_years?.max_years),
    r.is_canceled,
    r.all_day,
    textCell(r.created_at),
    textCell(r.updated_at),
  ];
}

/** The two cells after a record's own: its link on this server, and its distance in a geo search. */
export const searchCells = (eventUrl: string, distanceKm: number | null | undefined): Cell[] => [textCell(eventUrl), num(distanceKm)];

/** One record as cells in CSV_COLUMNS order. */
export function csvRow(r: EventRecord): Cell[] {
  return [...ownCells(r), ...searchCells(r.event_url, r.distance_km)];
}

/**
 * fast-csv one row at a time, without the row delimiter: a formatter stream written and read at
 * once (its transform answers synchronously). Each field is formatted on its own, so the cells of
 * a row rendered in two parts, joined by a comma, are the bytes of the whole row rendered at once.
 */
export class CsvLines {
  private readonly stream = format<Cell[], Cell[]>({ rowDelimiter: CRLF });
  private first = true;

  line(cells: Cell[]): Buffer {
    this.stream.write(cells);
    const out = this.stream.read() as Buffer | null;
    if (out === null) throw new Error('fast-csv did not format the row synchronously');
    // The stream writes the delimiter before every row but the first.
    const line = this.first ? out : out.subarray(CRLF.length);
    this.first = false;
    return line;
  }
}

/** Rows → CSV bytes; `header` puts the header row first (the first batch of a body, even an empty one). */
export function csvBatch(records: readonly EventRecord[], header: boolean): Promise<Buffer> {
  return writeToBuffer(records.map(csvRow), {
    headers: HEADERS,
    writeHeaders: header,
    alwaysWriteHeaders: header,
    rowDelimiter: CRLF,
    includeEndRowDelimiter: true,
  });
}
