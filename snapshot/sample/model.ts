// The bundled sample's calendar, before it is written out as feeds. Every choice is a hash of
// stable inputs (source, venue, program, the event's own date), never of the build date, so two
// builds on different days agree on every event they both cover — which is what keeps ids stable.
import { DateTime } from 'luxon';
import type { KnownVenue, Gazetteer } from '../gazetteer.ts';
import type { ParseWindow } from '../parse/types.ts';
import type { Source } from '../registry.ts';
import { FESTIVALS, SEASONAL, WEEKLY, type Kind, type Program } from './programs.ts';
import { fold } from '../../core/text.ts';
import { LA } from '../../core/zone.ts';

/** An organizer's site address without trailing slashes, for building page links under it. */
export function siteRoot(url: string): string {
  let u = url;
  while (u.endsWith('/')) u = u.slice(0, -1);
  return u;
}

/** FNV-1a: a small, stable string hash for deterministic choices. */
export function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface Occurrence {
  readonly uid: string;
  readonly program: Program;
  readonly title: string;
  readonly venue: KnownVenue;
  readonly organizer: { readonly name: string; readonly url: string };
  readonly start: DateTime;
  readonly end: DateTime;
  readonly allDay: boolean;
  readonly cancelled: boolean;
  readonly url: string;
  readonly ticketUrl: string | null;
  readonly imageUrl: string | null;
}

/** A weekly program as an iCal series: RRULE + EXDATEs + RECURRENCE-ID overrides. */
export interface Series {
  readonly uid: string;
  readonly program: Program;
  readonly venue: KnownVenue;
  readonly organizer: { readonly name: string; readonly url: string };
  /** First occurrence; the series runs weekly from here with no end. */
  readonly dtstart: DateTime;
  readonly exdates: readonly DateTime[];
  readonly moved: readonly { readonly rid: DateTime; readonly start: DateTime }[];
  readonly cancelled: readonly DateTime[];
  readonly url: string;
}

export interface SourceModel {
  readonly source: Source;
  readonly kind: Kind;
  readonly singles: Occurrence[];
  readonly series: Series[];
}

/** Series begin on this Monday, long before any window, so their RECURRENCE-IDs never depend on the build. */
const SERIES_ANCHOR = DateTime.fromISO('2025-01-06T00:00:00', { zone: LA });
const TIMES = ['10:00', '10:30', '11:00', '11:30', '15:30', '16:00'];
const EVENING = new Set(['teen-game-night', 'adult-book-club', 'after-dark']);
const PER_VENUE = 3;

export function kindOf(source: Source): Kind {
  const k = source.url.slice('sample://'.length).split(/[/?]/)[0];
  return (['library', 'museum', 'zoo', 'parks', 'aggregator'] as const).find((x) => x === k) ?? 'library';
}

function slotFor(venue: KnownVenue, p: Program): { weekday: number; hour: number; minute: number } {
  const h = hash(`${venue.key}/${p.key}`);
  const time = EVENING.has(p.key) ? '18:30' : TIMES[h % TIMES.length]!;
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  return { weekday: 1 + ((h >>> 8) % 6), hour, minute };
}

function programsAt(kind: Exclude<Kind, 'aggregator'>, venue: KnownVenue): Program[] {
  return [...WEEKLY[kind]].sort((a, b) => hash(`${venue.key}:${a.key}`) - hash(`${venue.key}:${b.key}`)).slice(0, PER_VENUE);
}

function days(window: ParseWindow): DateTime[] {
  const out: DateTime[] = [];
  for (let d = window.start.startOf('day'); d <= window.end; d = d.plus({ days: 1 })) out.push(d);
  return out;
}

function occurrence(src: Source, p: Program, venue: KnownVenue, start: DateTime, titleOverride?: string): Occurrence {
  const date = start.toISODate()!;
  const uid = `${src.id}-${p.key}-${venue.key}-${date}@sample.familyevents.example`;
  const h = hash(uid);
  const site = siteRoot(src.organizer.url);
  return {
    uid,
    program: p,
    title: titleOverride ?? p.title,
    venue,
    organizer: src.organizer,
    start,
    end: start.plus({ minutes: p.minutes }),
    allDay: p.allDay ?? false,
    cancelled: h % 41 === 0,
    url: `${site}/events/${p.key}-${date}`,
    // Registration on the host's own site, or (sometimes) on a ticketing platform we never republish.
    ticketUrl: p.register ? (h % 3 === 0 ? `https://www.eventbrite.com/e/${p.key}-${h}` : `${site}/events/${p.key}-${date}/register`) : null,
    imageUrl: h % 4 === 0 ? null : `${site.replace(/^http:/, 'https:')}/images/events/${p.key}.jpg`,
  };
}

function weeklySeries(src: Source, p: Program, venue: KnownVenue, window: ParseWindow): Series {
  const slot = slotFor(venue, p);
  const dtstart = SERIES_ANCHOR.plus({ days: slot.weekday - 1 }).set({ hour: slot.hour, minute: slot.minute });
  const exdates: DateTime[] = [];
  const moved: { rid: DateTime; start: DateTime }[] = [];
  const cancelled: DateTime[] = [];
  for (let t = dtstart; t <= window.end; t = t.plus({ weeks: 1 })) {
    if (t < window.start) continue;
    const h = hash(`${venue.key}/${p.key}/${t.toISODate()}`);
    if (h % 17 === 0) exdates.push(t);
    else if (h % 23 === 0) moved.push({ rid: t, start: t.plus({ minutes: 30 }) });
    else if (h % 29 === 0) cancelled.push(t);
  }
  const site = siteRoot(src.organizer.url);
  return {
    uid: `${src.id}-${p.key}-${venue.key}@sample.familyevents.example`,
    program: p,
    venue,
    organizer: src.organizer,
    dtstart,
    exdates,
    moved,
    cancelled,
    url: `${site}/programs/${p.key}`,
  };
}

function venuesOf(g: Gazetteer, src: Source): KnownVenue[] {
  const own = g.venues.filter((v) => v.organizer === src.organizer.name);
  const fallback = src.default_venue ? g.venueByKey.get(src.default_venue) : undefined;
  return own.length ? own : fallback ? [fallback] : [];
}

function organizerModel(g: Gazetteer, src: Source, kind: Exclude<Kind, 'aggregator'>, window: ParseWindow): SourceModel {
  const venues = venuesOf(g, src);
  const singles: Occurrence[] = [];
  const series: Series[] = [];
  const allDays = days(window);
  for (const venue of venues) {
    for (const p of programsAt(kind, venue)) {
      if (src.format === 'ical') {
        series.push(weeklySeries(src, p, venue, window));
        continue;
      }
      const slot = slotFor(venue, p);
      for (const d of allDays) if (d.weekday === slot.weekday) singles.push(occurrence(src, p, venue, d.set({ hour: slot.hour, minute: slot.minute })));
    }
    // Holidays and fairs: a couple of dates per month per venue, picked by the date itself.
    for (const d of allDays) {
      const h = hash(`${venue.key}/${d.toISODate()}`);
      const seasonal = SEASONAL[d.month] ?? [];
      if (seasonal.length && h % 13 === 0) {
        const p = seasonal[h % seasonal.length]!;
        singles.push(occurrence(src, p, venue, d.set({ hour: 11 + (h % 4), minute: 0 })));
      }
      if ((kind === 'parks' || kind === 'museum') && h % 53 === 1) {
        const p = FESTIVALS[h % FESTIVALS.length]!;
        singles.push(occurrence(src, p, venue, d.set({ hour: 10, minute: 0 })));
      }
    }
  }
  return { source: src, kind, singles, series };
}

/** Aggregators republish a share of everyone else's events: the cross-source duplicates the build must merge. */
function aggregatorModel(src: Source, others: readonly SourceModel[], g: Gazetteer): SourceModel {
  const region = g.venueByKey.get(src.default_venue ?? '');
  const regionCity = region ? g.cityByName.get(fold(region.city)) : undefined;
  const singles: Occurrence[] = [];
  for (const m of others) {
    for (const o of m.singles) {
      const h = hash(`${src.id}|${o.uid}`);
      if (h % 9 !== 0) continue;
      const city = g.cityByName.get(fold(o.venue.city));
      if (src.format === 'csv' && regionCity && city?.destination !== regionCity.destination) continue;
      const site = siteRoot(src.organizer.url);
      singles.push({
        ...o,
        uid: `${src.id}:${o.uid}`,
        // Same words, different typography: the merge must still see one event.
        title: h % 2 === 0 ? o.title.toUpperCase() : `${o.title}!`,
        url: `${site}/listing/${h}`,
      });
    }
  }
  return { source: src, kind: 'aggregator', singles, series: [] };
}

export function buildModels(g: Gazetteer, sources: readonly Source[], window: ParseWindow): SourceModel[] {
  const organizers = sources.filter((s) => kindOf(s) !== 'aggregator').map((s) => organizerModel(g, s, kindOf(s) as Exclude<Kind, 'aggregator'>, window));
  const aggregators = sources.filter((s) => kindOf(s) === 'aggregator').map((s) => aggregatorModel(s, organizers, g));
  return [...organizers, ...aggregators];
}
