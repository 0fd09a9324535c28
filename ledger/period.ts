// Quota periods: calendar months in America/Los_Angeles. A month is not a fixed number of seconds
// (28–31 days, and November and March gain or lose an hour), so every bound comes from luxon.
import { DateTime } from 'luxon';
import { ZONE } from '../core/zone.ts';

export interface Period {
  /** YYYY-MM of the month. */
  readonly month: string;
  readonly startMs: number;
  /** The instant the next month begins: the quota resets then. */
  readonly resetMs: number;
  /** First and last day, YYYY-MM-DD (the ledger's day keys). */
  readonly firstDay: string;
  readonly lastDay: string;
}

let lastPeriod: Period = { month: '', startMs: 0, resetMs: -1, firstDay: '', lastDay: '' };

/** The quota period holding an instant. Every quota decision asks (luxon's zone math is not cheap), so the month in hand is kept. */
export function periodAt(ms: number): Period {
  if (ms >= lastPeriod.startMs && ms < lastPeriod.resetMs) return lastPeriod;
  const start = DateTime.fromMillis(ms, { zone: ZONE }).startOf('month');
  const next = start.plus({ months: 1 });
  lastPeriod = {
    month: start.toFormat('yyyy-MM'),
    startMs: start.toMillis(),
    resetMs: next.toMillis(),
    firstDay: start.toISODate() ?? '',
    lastDay: next.minus({ days: 1 }).toISODate() ?? '',
  };
  return lastPeriod;
}

let lastDay = { fromMs: 0, toMs: -1, day: '' };

/** The ledger day (America/Los_Angeles) of an instant. Every charge asks, so the day in hand is kept. */
export function dayAt(ms: number): string {
  if (ms >= lastDay.fromMs && ms <= lastDay.toMs) return lastDay.day;
  const start = DateTime.fromMillis(ms, { zone: ZONE }).startOf('day');
  lastDay = { fromMs: start.toMillis(), toMs: start.plus({ days: 1 }).toMillis() - 1, day: start.toISODate() ?? '' };
  return lastDay.day;
}

/** The days from `first` through `last` (YYYY-MM-DD), in order. */
export function daysBetween(first: string, last: string): string[] {
  const out: string[] = [];
  for (let d = DateTime.fromISO(first, { zone: ZONE }); ; d = d.plus({ days: 1 })) {
    const iso = d.toISODate() ?? '';
    if (iso > last || out.length > 31) break;
    out.push(iso);
  }
  return out;
}

/** An instant as ISO 8601 with the America/Los_Angeles offset, as the API writes datetimes. */
export function isoLocal(ms: number): string {
  return DateTime.fromMillis(ms, { zone: ZONE }).toISO({ suppressMilliseconds: true }) ?? '';
}
