// iCalendar (RFC 5545) via ical.js: events, recurrence (RRULE/RDATE/EXDATE, RECURRENCE-ID overrides)
// expanded within the snapshot window. Wall-clock times are placed in their TZID's IANA zone by luxon
// rather than by registering the feed's VTIMEZONE blocks: those are global state in ical.js, and one
// feed's broken VTIMEZONE must not shift another feed's times.
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { fromWallClock, zoneFor } from '../normalize/times.ts';
import { type RawEvent, type UpstreamTime } from '../types.ts';
import { referenceInstant, titleDate } from './title-date.ts';
import { emptyRaw, FeedFormatError, MAX_OCCURRENCES, toNumber, type ParseOptions, type ParseOutput } from './types.ts';

type ICalTime = InstanceType<typeof ICAL.Time>;
type ICalComponent = InstanceType<typeof ICAL.Component>;

// Steps through a series before giving up on reaching the window (a daily series from 2010 is ~6k).
const MAX_ITERATIONS = 100_000;

/** Wall-clock minutes as one comparable number (not an instant): for cheap skipping only. */
const wallKey = (t: { year: number; month: number; day: number; hour: number; minute: number }): number =>
  (((t.year * 13 + t.month) * 32 + t.day) * 24 + t.hour) * 60 + t.minute;

function toUpstream(t: ICalTime, tzid: string | null): UpstreamTime {
  const parts = { year: t.year, month: t.month, day: t.day, hour: t.isDate ? 0 : t.hour, minute: t.isDate ? 0 : t.minute, second: t.isDate ? 0 : t.second };
  const zone = t.zone?.tzid === 'UTC' ? 'UTC' : zoneFor(tzid);
  return { at: fromWallClock(parts, zone), dateOnly: t.isDate };
}

const sequenceOf = (c: ICalComponent): number => Number(c.getFirstPropertyValue('sequence') ?? 0) || 0;

const text = (c: ICalComponent, name: string): string | null => {
  const v: unknown = c.getFirstPropertyValue(name);
  return typeof v === 'string' && v.trim() !== '' ? v : null;
};

function categoriesOf(c: ICalComponent): string[] {
  return c
    .getAllProperties('categories')
    .flatMap((p) => p.getValues().map(String))
    .filter((s) => s.trim() !== '');
}

function tzidOf(c: ICalComponent, name: string): string | null {
  const p = c.getFirstProperty(name);
  const tz: unknown = p?.getParameter('tzid');
  return typeof tz === 'string' ? tz : null;
}

// Trumba exports its custom fields as X-TRUMBA-CUSTOMFIELD;NAME="Audience":Adults\,Teen. ical.js
// does not know the property to be TEXT, so its escapes are undone here.
function trumbaField(c: ICalComponent, name: string): string | null {
  const p = c.getAllProperties('x-trumba-customfield').find((q) => q.getParameter('name') === name);
  const v: unknown = p?.getFirstValue();
  return typeof v === 'string' && v.trim() !== '' ? unescapeText(v) : null;
}

/** The fields an occurrence takes from its component (the master, or its RECURRENCE-ID override). */
function describe(c: ICalComponent): Omit<RawEvent, 'uid' | 'start' | 'end'> {
  const geo: unknown = c.getFirstPropertyValue('geo');
  const [lat, lng] = Array.isArray(geo) ? geo.map(toNumber) : [null, null];
  const attach = c.getFirstProperty('attach');
  const image = c.getFirstPropertyValue('image') ?? (attach && /^image\//.test(String(attach.getParameter('fmttype') ?? '')) ? attach.getFirstValue() : null);
  const organizer = c.getFirstProperty('organizer');
  const status = text(c, 'status');
  return {
    ...emptyRaw(),
    title: text(c, 'summary') ?? '',
    description: ((alt) => (alt === null ? null : unescapeText(alt)))(text(c, 'x-alt-desc')) ?? text(c, 'description'),
    location: text(c, 'location'),
    lat: lat ?? null,
    lng: lng ?? null,
    categories: categoriesOf(c),
    url: text(c, 'url'),
    imageUrl: typeof image === 'string' ? image : null,
    organizerName: organizer ? ((organizer.getParameter('cn') as string | undefined) ?? null) : null,
    priceText: text(c, 'x-price'),
    // All-in-One Event Calendar (WordPress) flags free events so; its other value carries no price.
    isFree: /^\s*free\s*$/i.test(text(c, 'x-cost-type') ?? '') ? true : null,
    ages: text(c, 'x-ages') ?? text(c, 'x-age-range') ?? trumbaField(c, 'Audience'),
    cancelled: status?.toUpperCase() === 'CANCELLED',
  };
}

// Some exporters write ISO dates with dashes ("DTSTART;VALUE=DATE:2026-12-09"); ical.js slices
// basic-form values by position and would read that as another date entirely, so they are
// rewritten to the basic form RFC 5545 requires before parsing.
const DASHED_TIME = /^((?:DTSTART|DTEND|DUE|EXDATE|RDATE|RECURRENCE-ID)[^:\r\n]{0,200}:)(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?/gim;

function undash(input: string): string {
  return input.replace(DASHED_TIME, (_m, head: string, y: string, mo: string, d: string, h?: string, mi?: string, sec?: string) =>
    h === undefined ? `${head}${y}${mo}${d}` : `${head}${y}${mo}${d}T${h}${mi}${sec ?? '00'}`,
  );
}

/** RFC 5545 TEXT unescaping, for x-properties ical.js does not know to be TEXT (X-ALT-DESC). */
function unescapeText(v: string): string {
  return v.replace(/\\([\\,;n])/gi, (_m, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

/**
 * ical.js matches EXDATE and RECURRENCE-ID against occurrences by their wall-clock value. A series in
 * a TZID zone we do not register runs on floating wall-clock times, so a UTC-form exclusion or
 * override (allowed by RFC 5545) would never match: convert those to the series' own wall clock.
 */
function alignToSeriesZone(components: readonly ICalComponent[], tzid: string): void {
  const zone = zoneFor(tzid);
  const toWall = (t: ICalTime): ICalTime => {
    if (t.zone?.tzid !== 'UTC' || t.isDate) return t;
    const local = DateTime.fromMillis(Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second), { zone });
    return ICAL.Time.fromData({ year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute, second: local.second });
  };
  for (const c of components) {
    for (const name of ['exdate', 'recurrence-id']) {
      for (const prop of c.getAllProperties(name)) {
        const values = prop.getValues() as ICalTime[];
        if (!values.some((t) => t.zone?.tzid === 'UTC' && !t.isDate)) continue;
        if (name === 'exdate') prop.setValues(values.map(toWall));
        else prop.setValue(toWall(values[0]!));
        prop.setParameter('tzid', tzid);
      }
    }
  }
}

export function parseICal(input: string, opts: ParseOptions): ParseOutput {
  if (!/BEGIN:VCALENDAR/i.test(input.slice(0, 4096))) throw new FeedFormatError('not an iCalendar document (no BEGIN:VCALENDAR)');
  let vevents: ICalComponent[];
  try {
    // Several root components come back as an array of them; a broken nesting as a malformed tree,
    // which ical.js only notices when walked — so the walk is part of reading the document.
    const jcal = ICAL.parse(undash(input)) as unknown[];
    const roots = (Array.isArray(jcal[0]) ? jcal : [jcal]).map((c) => new ICAL.Component(c as unknown[]));
    const calendar = roots.find((c) => c.name === 'vcalendar');
    if (!calendar) throw new Error('no VCALENDAR component');
    vevents = calendar.getAllSubcomponents('vevent');
  } catch (err) {
    throw new FeedFormatError(`iCalendar syntax error: ${(err as Error).message}`);
  }
  // Every VEVENT is accounted for. Several without RECURRENCE-ID may share a UID: a program at
  // several branches or times, each its own event (normalizeAll tells them apart by start and
  // place, and merges the true copies, the higher SEQUENCE standing). An override is merged into
  // the occurrence it revises; one that no occurrence in the window takes is read on its own.
  const masters = new Map<string, ICalComponent[]>();
  const overrides = new Map<string, ICalComponent[]>();
  const singles: ICalComponent[] = [];
  let merged = 0;
  // ical.js reads a value when first asked: a RECURRENCE-ID it cannot read throws then.
  const ridOf = (ve: ICalComponent): string | null => {
    try {
      return String(ve.getFirstPropertyValue('recurrence-id'));
    } catch {
      return null;
    }
  };
  // An override that cannot say which occurrence it revises revises none: it is an item without a
  // readable start, counted as one, and the series it names is expanded without it.
  const unreadable: [ICalComponent, string][] = [];
  for (const ve of vevents) {
    const uid = text(ve, 'uid');
    if (!uid) singles.push(ve);
    else if (ve.hasProperty('recurrence-id')) {
      if (ridOf(ve) === null) unreadable.push([ve, uid]);
      else overrides.set(uid, [...(overrides.get(uid) ?? []), ve]);
    } else masters.set(uid, [...(masters.get(uid) ?? []), ve]);
  }
  // Two overrides of one occurrence are two revisions of it (RFC 5545 §3.8.7.4): the higher SEQUENCE
  // supersedes; on a tie the first stands.
  for (const [uid, list] of overrides) {
    if (list.length < 2) continue;
    const byRid = new Map<string, ICalComponent>();
    for (const o of list) {
      const rid = ridOf(o)!;
      const seen = byRid.get(rid);
      if (seen) merged++;
      if (!seen || sequenceOf(o) > sequenceOf(seen)) byRid.set(rid, o);
    }
    overrides.set(uid, [...byRid.values()]);
  }

  const winStart = opts.window.start.toMillis();
  const winEnd = opts.window.end.toMillis();
  const events: RawEvent[] = [];
  let noStart = 0;
  let outsideWindow = 0;
  const applied = new Set<ICalComponent>();

  const emit = (c: ICalComponent, uid: string | null, start: ICalTime, end: ICalTime | null, tzid: string | null, endTzid: string | null): void => {
    const base = describe(c);
    events.push({
      ...base,
      uid,
      start: toUpstream(start, tzid),
      end: end ? toUpstream(end, endTzid ?? tzid) : null,
      endIsExclusiveDate: end?.isDate ?? false,
      sequence: sequenceOf(c),
    });
  };

  // A VEVENT with no readable DTSTART (none, "TBD", a broken RRULE) may still state its day in its
  // title ("Sat, Nov 29 – Storytime"), the year taken from its DTSTAMP; else it is counted and
  // skipped, and the rest of the feed stands.
  const noReadableStart = (c: ICalComponent, uid: string | null): void => {
    let stamp: string | null;
    try {
      stamp = c.getFirstProperty('dtstamp')?.toICALString().split(':').pop() ?? null;
    } catch {
      stamp = null;
    }
    const start = titleDate(text(c, 'summary'), referenceInstant(stamp));
    if (start) events.push({ ...describe(c), uid, start, end: null, sequence: sequenceOf(c) });
    else noStart++;
  };
  const guarded = (c: ICalComponent, uid: string | null, f: () => void): void => {
    try {
      f();
    } catch {
      noReadableStart(c, uid);
    }
  };
  for (const [ve, uid] of unreadable) noReadableStart(ve, uid);

  /** An occurrence's uid: the series uid + its RECURRENCE-ID (the original start), stable across rebuilds. */
  const occurrenceUid = (uid: string, rid: ICalTime, tzid: string | null): string =>
    `${uid}#${toUpstream(rid, tzid).at.toUTC().toISO({ suppressMilliseconds: true })}`;

  // Without a UID (RFC 5545 requires one) an event is still read, a series expanded: its
  // occurrences are then told apart by title, start and place.
  for (const ve of singles) guarded(ve, null, () => expandMaster(null, ve));

  for (const [uid, list] of masters) for (const ve of list) guarded(ve, uid, () => expandMaster(uid, ve));

  function expandMaster(uid: string | null, ve: ICalComponent): void {
    const tzid = tzidOf(ve, 'dtstart');
    const exceptions = uid === null ? [] : (overrides.get(uid) ?? []);
    if (tzid) alignToSeriesZone([ve, ...exceptions], tzid);
    const ev = new ICAL.Event(ve, { exceptions, strictExceptions: true });
    const hasEnd = ve.hasProperty('dtend') || ve.hasProperty('duration');
    if (!ev.startDate) {
      noReadableStart(ve, uid);
      return;
    }
    if (!ev.isRecurring()) {
      // An override of a single event's one occurrence (some calendars write one when an event is
      // edited) stands for it.
      const startMs = toUpstream(ev.startDate, tzid).at.toMillis();
      const o = exceptions.find(
        (x) =>
          !applied.has(x) && toUpstream(x.getFirstPropertyValue('recurrence-id') as ICalTime, tzidOf(x, 'recurrence-id') ?? tzid).at.toMillis() === startMs,
      );
      if (o) {
        applied.add(o);
        const oe = new ICAL.Event(o);
        const oTz = tzidOf(o, 'dtstart') ?? tzid;
        emit(o, uid, oe.startDate, oe.endDate, oTz, tzidOf(o, 'dtend') ?? oTz);
      } else emit(ve, uid, ev.startDate, hasEnd ? ev.endDate : null, tzid, tzidOf(ve, 'dtend'));
      return;
    }
    const it = ev.iterator();
    let emitted = 0;
    // Series often start years before the window: occurrences are skipped on wall-clock keys (a
    // day of slack each side covers any zone offset) and only those near the window pay for luxon.
    const durationMs = ev.duration.toSeconds() * 1000;
    const durationDays = Math.ceil(durationMs / 86_400_000);
    const skipBefore = wallKey(opts.window.start.minus({ days: durationDays + 1 }).toUTC());
    const stopAfter = wallKey(opts.window.end.plus({ days: 1 }).toUTC());
    for (let i = 0, next = it.next(); next && i < MAX_ITERATIONS && emitted < MAX_OCCURRENCES; i++, next = it.next()) {
      const key = wallKey(next);
      if (key > stopAfter) break;
      if (key < skipBefore) continue;
      const startMs = toUpstream(next, tzid).at.toMillis();
      if (startMs > winEnd) break;
      // In the window or not by the rule's own time: an override that moves its occurrence out of
      // the window is still that occurrence (and dropped as outside_window), one that moves it in
      // is read on its own below.
      if (startMs + durationMs < winStart) continue;
      const occ = ev.getOccurrenceDetails(next);
      const item = occ.item.component;
      const occTz = item === ve ? tzid : (tzidOf(item, 'dtstart') ?? tzid);
      if (item !== ve) applied.add(item);
      emit(item, uid === null ? null : occurrenceUid(uid, occ.recurrenceId, tzid), occ.startDate, hasEnd || item !== ve ? occ.endDate : null, occTz, occTz);
      emitted++;
    }
    // A series with nothing in the window is still one upstream item, and says why it is not served.
    if (emitted === 0) outsideWindow++;
  }

  // Overrides no occurrence in the window took: of a series whose VEVENT is missing, of an
  // occurrence the rule does not produce, or moved into (or out of) the window from elsewhere.
  // Each is an event in its own right, at its own time; the normalizer drops one outside the window.
  for (const [uid, list] of overrides) {
    for (const o of list) {
      if (applied.has(o)) continue;
      guarded(o, uid, () => {
        const oe = new ICAL.Event(o);
        const tzid = tzidOf(o, 'dtstart');
        if (!oe.startDate) noReadableStart(o, uid);
        else
          emit(
            o,
            occurrenceUid(uid, oe.recurrenceId, tzidOf(o, 'recurrence-id') ?? tzid),
            oe.startDate,
            o.hasProperty('dtend') || o.hasProperty('duration') ? oe.endDate : null,
            tzid,
            tzidOf(o, 'dtend'),
          );
      });
    }
  }
  // An override that revised an occurrence is one more VEVENT, merged into that occurrence: so a
  // feed's items are its VEVENTs, a series counting as its occurrences in the window (at least one).
  merged += applied.size;
  return { events, noStart, ...(outsideWindow ? { outsideWindow } : {}), ...(merged ? { merged } : {}) };
}
