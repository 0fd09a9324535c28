// RawEvent → EventRow: every normalization rule of the record, in one pass per event.
import type { Gazetteer } from '../gazetteer.ts';
import type { Registry, Source } from '../registry.ts';
import type { DropReason, RawEvent } from '../types.ts';
import { parseAges } from './ages.ts';
import { noticeKind } from './kind.ts';
import { classify } from './categories.ts';
import { bareHost, imageUrl, organizerKey, resolveOrganizer, type VettedOrganizer } from './links.ts';
import { normalizePrice } from './price.ts';
import { eventSpan, isoLocal } from './times.ts';
import { plainText, summarize } from './text.ts';
import { defaultVenue, feedIsElsewhere, formatAddress, placeInTitle, resolveVenue } from './venues.ts';
import type { EventRow } from '../../core/record.ts';
import { LA } from '../../core/zone.ts';
import { fold, words } from '../../core/text.ts';
import { indexTerms } from '../../core/stem.ts';
import { eventId } from '../../core/ids.ts';

const CANCEL_PREFIX = /^\s{0,4}[[(]?\s{0,2}(?:canceled|cancelled|canceling|cancelling)\s{0,2}[\])]?\s{0,4}(?:[-–—:|!]\s{0,4})?/i;
const CANCEL_SUFFIX = /\s{0,4}[-–—:|([]\s{0,2}(?:canceled|cancelled)\s{0,2}[)\]]?\s{0,4}$/i;

/** "Canceled: Toddler Time" → ["Toddler Time", true]. The marker moves from the title to is_canceled. */
export function splitCancelMarker(title: string): [string, boolean] {
  const a = title.replace(CANCEL_PREFIX, '');
  if (a !== title && a.trim() !== '') return [a.trim(), true];
  const b = title.replace(CANCEL_SUFFIX, '');
  if (b !== title && b.trim() !== '') return [b.trim(), true];
  return [title.trim(), false];
}

export interface NormalizeContext {
  readonly gazetteer: Gazetteer;
  readonly source: Source;
  readonly rank: number;
  /** Every registry feed address: never published as an organizer_url. */
  readonly feedAddresses: ReadonlySet<string>;
  /** Registry organizers by organizerKey(name), for events an aggregator republishes. */
  readonly organizers: ReadonlyMap<string, VettedOrganizer>;
  readonly windowStartMs: number;
  readonly windowEndMs: number;
  /** The feed's items are in another state or country (normalizeAll reads it from the whole feed). */
  readonly feedElsewhere?: boolean;
}

/** The context of one source within its registry: the same for a build and for `normalize FILE`. */
export function sourceContext(
  registry: Registry,
  source: Source,
  gazetteer: Gazetteer,
  window: { readonly start: { toMillis(): number }; readonly end: { toMillis(): number } },
): NormalizeContext {
  const rank = registry.sources.findIndex((s) => s.id === source.id);
  return {
    gazetteer,
    source,
    rank: rank >= 0 ? rank : registry.sources.length,
    feedAddresses: new Set(registry.sources.filter((s) => /^https?:/.test(s.url)).map((s) => s.url)),
    organizers: new Map([...registry.sources, source].map((s) => [organizerKey(s.organizer.name), s.organizer])),
    windowStartMs: window.start.toMillis(),
    windowEndMs: window.end.toMillis(),
  };
}

/** Where an item is, as its id reads it: the upstream place text, else its coordinates. */
const placeText = (raw: RawEvent): string => raw.location ?? (raw.lat !== null && raw.lng !== null ? `${raw.lat},${raw.lng}` : '');

/** The item's own id: its uid, else its page. Null when it has neither (the id is then its title, start and place). */
const upstreamIdOf = (raw: RawEvent): string | null => raw.uid?.trim() || raw.url?.trim() || null;

/** `placeInId`: the item's uid is shared by other items of the feed at other times or places (normalizeAll). */
export function normalizeEvent(raw: RawEvent, ctx: NormalizeContext, placeInId = false): EventRow | DropReason {
  const src = ctx.source;
  const [title0, cancelledByTitle] = splitCancelMarker(plainText(raw.title) ?? '');
  const title = title0.slice(0, 300);
  if (title === '') return 'no_title';

  const description = plainText(raw.description);
  // A closure, a private booking, a deadline posted on the calendar: nothing to go to (kind.ts).
  if (noticeKind(title, description) !== null) return 'not_an_event';
  // Where it happens and who holds it: an event at a taproom, or on a brewery's own calendar, that
  // speaks to no child is a night out for grown-ups (ages.ts weighs it).
  const upstreamLocation = plainText(raw.location);
  const place = [upstreamLocation, plainText(raw.organizerName) ?? src.organizer.name].filter((p) => p !== null).join(', ');
  // And when: a taproom's evening is a night out, its Saturday-morning market is not.
  const startHour = raw.start.dateOnly || !raw.start.at.isValid ? null : raw.start.at.setZone(LA).hour;
  const ages = parseAges(raw.ages, title, description, place, startHour);
  if (ages?.kind === 'adults') return 'adults_only';

  const span = eventSpan(raw.start, raw.end, raw.endIsExclusiveDate ?? false);
  const startMs = span.start.toMillis();
  const endMs = span.end ? span.end.toMillis() : startMs;
  if (!Number.isFinite(startMs)) return 'no_start';
  if (endMs < ctx.windowStartMs || startMs > ctx.windowEndMs) return 'outside_window';

  // The event's organizer and its links: the registry's, whatever the item claims (links.ts).
  const org = resolveOrganizer(
    { name: plainText(raw.organizerName), url: raw.organizerUrl, ticketUrl: raw.ticketUrl },
    src.organizer,
    ctx.organizers,
    ctx.feedAddresses,
  );
  const organizer = org.organizer;

  // An item with no place of its own may name one in its title ("Band @ Fox Theater - Oakland").
  const location = upstreamLocation ?? (raw.lat === null ? placeInTitle(title) : null);
  const resolved = resolveVenue(ctx.gazetteer, { location, lat: raw.lat, lng: raw.lng, organizer, feedElsewhere: ctx.feedElsewhere ?? false });
  // An event placed elsewhere is not ours: the source's default venue would move it here.
  if (resolved === 'outside_area') return 'outside_area';
  const venue = resolved ?? defaultVenue(ctx.gazetteer, src.default_venue);
  if (!venue) return 'no_location';

  const { categories, tags } = classify(raw.categories, title, description, raw.schemaTypes, { organizer, url: raw.url });
  const price = normalizePrice(raw, src.free_by_default, { title, description: raw.description, weekday: span.start.weekday });
  const summary = summarize(raw.summary, description);
  // With no upstream id the event is its title, start and place (the same title on the same day in
  // two towns is two events). Coordinates stand in only for a place with no name, so that the id
  // of an event at a named place stays what it was.
  // An upstream id several items share (a program at several branches or times) is told apart by
  // the same start and place, and only then, so that every other id stays what it was.
  const upstreamId = upstreamIdOf(raw);
  const uid = upstreamId
    ? placeInId
      ? `${upstreamId}|${isoLocal(span.start)}|${placeText(raw)}`
      : upstreamId
    : `${title}|${isoLocal(span.start)}|${placeText(raw)}`;
  const range = ages?.kind === 'range' ? ages.range : null;

  return {
    id: eventId(src.id, uid),
    title,
    description,
    summary,
    start_datetime: isoLocal(span.start),
    end_datetime: span.end ? isoLocal(span.end) : null,
    start_ms: startMs,
    end_ms: endMs,
    venue_key: venue.key,
    venue_name: venue.name,
    venue_address: formatAddress(venue),
    venue_city: venue.city,
    venue_lat: Math.round(venue.lat * 1e6) / 1e6,
    venue_lng: Math.round(venue.lng * 1e6) / 1e6,
    venue_geo_precision: venue.precision,
    organizer,
    organizer_url: org.organizerUrl,
    categories,
    tags,
    image_url: imageUrl(raw.imageUrl),
    is_free: price.isFree,
    price_min: price.min,
    price_max: price.max,
    price_note: price.note,
    ticket_url: org.ticketUrl,
    source: bareHost(src.organizer.url),
    destination: venue.destination || src.destination,
    age_min_months: range?.min_months ?? null,
    age_max_months: range?.max_months ?? null,
    is_canceled: raw.cancelled || cancelledByTitle,
    all_day: span.allDay,
    city_key: fold(venue.city),
    search_text: searchText({ title, summary, description, venue_name: venue.name, organizer, tags }),
    source_id: src.id,
    source_rank: ctx.rank,
  };
}

/**
 * " w1 w2 … ~ t1 t2 …": the distinct folded words of exactly the served fields the q filter
 * searches (title, summary, description, venue name, organizer, tags), then, after " ~ " when there
 * are any, the other terms q matches them by (core/stem.ts indexTerms: compounds of neighbouring
 * words and stems). A q prefix never starts with "~", so both halves are searched alike; the
 * search database's vocabulary ("did you mean") reads only the first. Recomputed whenever a merge
 * or a venue spelling changes those fields, so q never matches text the record does not show.
 */
export function searchText(r: Pick<EventRow, 'title' | 'summary' | 'description' | 'venue_name' | 'organizer' | 'tags'>): string {
  const fields = [r.title, r.summary, r.description, r.venue_name, r.organizer, ...r.tags].filter((t): t is string => !!t).map((t) => words(t));
  const terms = indexTerms(fields);
  return ` ${terms.words.join(' ')}${terms.extra.length ? ` ~ ${terms.extra.join(' ')}` : ''}`;
}

export interface Normalized {
  /** One row per upstream event: copies of one event (same id) are merged into one row. */
  readonly rows: EventRow[];
  readonly dropped: Partial<Record<DropReason, number>>;
  /** Items merged into another item's row: the same uid at the same start and place, or an older SEQUENCE of it. */
  readonly merged: number;
  /** The first message of an item the normalizer could not handle (counted as `invalid`). */
  readonly itemError: string | null;
}

/**
 * Every item of one source, as a build and `family-events normalize` both see them: each ends as a
 * row, a drop with its reason, or merged into a row (items = rows + dropped + merged). `onItem`
 * hears each item's outcome once all are read (`normalize --explain` reports it item by item); a
 * merged item hears the row it was merged into, with `merged` set.
 */
export function normalizeAll(
  raws: readonly RawEvent[],
  ctx: NormalizeContext,
  onItem?: (index: number, outcome: EventRow | DropReason, merged: boolean) => void,
): Normalized {
  // A bare town name means the town of the feed's own region: in a Massachusetts calendar, Concord, MA.
  const organizer = ctx.source.organizer.name;
  const places = raws.map((raw) => ({ location: plainText(raw.location), lat: raw.lat, lng: raw.lng, organizer }));
  if (feedIsElsewhere(ctx.gazetteer, places)) ctx = { ...ctx, feedElsewhere: true };
  // Uids the feed gives to items at more than one start or place: those ids also take the start and place.
  const placements = new Map<string, Set<string>>();
  for (const raw of raws) {
    const id = upstreamIdOf(raw);
    if (id === null) continue;
    const at = `${raw.start.at.toMillis()}|${placeText(raw)}`;
    const seen = placements.get(id);
    if (seen) seen.add(at);
    else placements.set(id, new Set([at]));
  }
  const kept = new Map<string, { row: EventRow; index: number; sequence: number }>();
  const outcomes: (EventRow | DropReason | { readonly into: string })[] = [];
  const dropped: Partial<Record<DropReason, number>> = {};
  let merged = 0;
  let itemError: string | null = null;
  for (const [i, raw] of raws.entries()) {
    let r: EventRow | DropReason;
    try {
      const id = upstreamIdOf(raw);
      r = normalizeEvent(raw, ctx, id !== null && (placements.get(id)?.size ?? 0) > 1);
    } catch (err) {
      itemError ??= (err as Error).message.slice(0, 300);
      r = 'invalid';
    }
    if (typeof r === 'string') {
      dropped[r] = (dropped[r] ?? 0) + 1;
      outcomes.push(r);
      continue;
    }
    const sequence = raw.sequence ?? 0;
    const prev = kept.get(r.id);
    if (!prev) {
      kept.set(r.id, { row: r, index: i, sequence });
      outcomes.push(r);
      continue;
    }
    merged++;
    // The same occurrence again: a higher SEQUENCE is a later revision and replaces it; else the first stands.
    if (sequence > prev.sequence) {
      outcomes[prev.index] = { into: r.id };
      kept.set(r.id, { row: r, index: i, sequence });
      outcomes.push(r);
    } else outcomes.push({ into: r.id });
  }
  const rows = [...kept.values()].sort((a, b) => a.index - b.index).map((k) => k.row);
  if (onItem) {
    for (const [i, o] of outcomes.entries()) {
      if (typeof o === 'string') onItem(i, o, false);
      else if ('into' in o) onItem(i, kept.get(o.into)!.row, true);
      else onItem(i, o, false);
    }
  }
  return { rows, dropped, merged, itemError };
}
