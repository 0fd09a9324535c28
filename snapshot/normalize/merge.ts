// Passes over all of a snapshot's rows: one record per real-world event (the same event from two
// sources), and one name/address/coordinates per place.
import { CATEGORY_SLUGS, type CategorySlug } from '../../core/taxonomy.ts';
import { searchText } from './event.ts';
import type { EventRow, GeoPrecision } from '../../core/record.ts';
import { words } from '../../core/text.ts';

export interface MergeResult {
  readonly rows: EventRow[];
  /** Rows folded into a higher-ranked source's record, by the source that lost them. */
  readonly mergedAway: ReadonlyMap<string, number>;
}

const bump = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + 1);

/** Same title words, same start minute, same place ⇒ the same event. */
export function sameEventKey(r: Pick<EventRow, 'title' | 'start_ms' | 'venue_key'>): string {
  return `${words(r.title).join(' ')}|${Math.floor(r.start_ms / 60_000)}|${r.venue_key}`;
}

const FILLABLE = ['description', 'summary', 'end_datetime', 'organizer_url', 'image_url', 'ticket_url'] as const;

const statesPrice = (r: EventRow): boolean => r.price_min !== null || r.price_max !== null || r.price_note !== null;

/**
 * is_free and the price travel together, so the merged record keeps them agreeing (a free record is
 * priced 0–0 or not at all; a price of 0 is free): a primary that states no price takes another
 * copy's price and is_free both (its own is_free was the source's default); one that does keeps its
 * is_free, and fills its gaps only from a copy that agrees with it.
 */
function fillPrice(primary: EventRow, other: EventRow): void {
  if (!statesPrice(other)) return;
  if (!statesPrice(primary)) {
    primary.is_free = other.is_free;
    primary.price_min = other.price_min;
    primary.price_max = other.price_max;
    primary.price_note = other.price_note;
    return;
  }
  if (other.is_free !== primary.is_free) return;
  if (primary.price_min === null && primary.price_max === null) {
    primary.price_min = other.price_min;
    primary.price_max = other.price_max;
  }
  primary.price_note ??= other.price_note;
}

/** One record from several sources' copies of an event: the best-ranked source wins, the others fill its gaps. */
export function mergeGroup(group: EventRow[]): EventRow {
  group.sort((a, b) => a.source_rank - b.source_rank || (a.id < b.id ? -1 : 1));
  const primary: EventRow = { ...group[0]! };
  const cats = new Set<CategorySlug>(primary.categories);
  const tags = new Set(primary.tags);
  // All copies start at the same minute, so an all-day copy means midnight. A primary at midnight
  // with no end says no more than a date does (how many exporters write one): the all-day copy's
  // reading stands. Otherwise the flag is the primary's, and an end fills a gap only from a copy
  // that agrees (an all-day copy's 23:59:59 is no timed event's end).
  const allDayCopy = primary.all_day || primary.end_datetime !== null ? undefined : group.find((r) => r.all_day);
  if (allDayCopy) {
    primary.all_day = true;
    primary.end_datetime = allDayCopy.end_datetime;
    primary.end_ms = allDayCopy.end_ms;
  }
  for (const other of group.slice(1)) {
    for (const f of FILLABLE) {
      if (f === 'end_datetime' && other.all_day !== primary.all_day) continue;
      if (primary[f] === null && other[f] !== null) primary[f] = other[f];
    }
    if (primary.end_datetime === other.end_datetime) primary.end_ms = Math.max(primary.end_ms, other.end_ms);
    if (primary.age_min_months === null && other.age_min_months !== null) {
      primary.age_min_months = other.age_min_months;
      primary.age_max_months = other.age_max_months;
    }
    fillPrice(primary, other);
    for (const c of other.categories) cats.add(c);
    for (const t of other.tags) tags.add(t);
  }
  if (primary.end_datetime === null) primary.end_ms = primary.start_ms;
  // "community" is the fallback category; a merge that found a real one drops it.
  if (cats.size > 1) cats.delete('community');
  primary.categories = CATEGORY_SLUGS.filter((c) => cats.has(c));
  primary.tags = [...tags].filter((t) => !cats.has(t as CategorySlug)).sort();
  primary.search_text = searchText(primary);
  return primary;
}

/** A spelling of a place: coordinates travel with how precise they are. */
export type VenueForm = readonly [name: string, address: string, lat: number, lng: number, precision: GeoPrecision];
export const venueFormOf = (r: Pick<EventRow, 'venue_name' | 'venue_address' | 'venue_lat' | 'venue_lng' | 'venue_geo_precision'>): VenueForm => [
  r.venue_name,
  r.venue_address,
  r.venue_lat,
  r.venue_lng,
  r.venue_geo_precision,
];

/** The spelling of an ad-hoc place most events use; ties go to the smallest, so the choice is stable. */
export function chooseVenueForm(votes: ReadonlyMap<string, number>): VenueForm {
  const best = [...votes].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  return JSON.parse(best) as VenueForm;
}

/** Ad-hoc venues (not in the gazetteer) may be spelled differently per event: keep the most common spelling. */
function canonicalizeVenues(rows: EventRow[]): void {
  const votes = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (!r.venue_key.startsWith('adhoc:')) continue;
    const m = votes.get(r.venue_key) ?? new Map<string, number>();
    bump(m, JSON.stringify(venueFormOf(r)));
    votes.set(r.venue_key, m);
  }
  const chosen = new Map<string, VenueForm>();
  for (const [key, forms] of votes) chosen.set(key, chooseVenueForm(forms));
  for (const r of rows) {
    const c = chosen.get(r.venue_key);
    if (c) [r.venue_name, r.venue_address, r.venue_lat, r.venue_lng, r.venue_geo_precision] = c;
  }
}

/**
 * The in-memory twin of the build's DuckDB assembly (snapshot/build/write.ts), for the few files
 * `family-events normalize` reads; a test holds the two to the same records. Rows come from
 * normalizeAll (one per uid). Takes ownership: rows are updated in place and returned.
 */
export function mergeRows(input: readonly EventRow[]): MergeResult {
  const mergedAway = new Map<string, number>();
  const rows = [...input];
  canonicalizeVenues(rows);
  const groups = new Map<string, EventRow[]>();
  for (const r of rows) {
    const k = sameEventKey(r);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  const out: EventRow[] = [];
  for (const g of groups.values()) {
    // Most events are published once: nothing to merge.
    if (g.length === 1) {
      out.push(g[0]!);
      continue;
    }
    const merged = mergeGroup(g);
    for (const r of g) if (r.id !== merged.id) bump(mergedAway, r.source_id);
    out.push(merged);
  }
  out.sort((a, b) => a.start_ms - b.start_ms || (a.id < b.id ? -1 : 1));
  return { rows: out, mergedAway };
}
