// Shared by the parser tests: the snapshot window they all parse in, fixture loading, and the
// independent luxon oracle for "this wall-clock time in that zone".
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { buildWindow } from '../../../snapshot/build/build.ts';
import type { ParseWindow } from '../../../snapshot/parse/types.ts';
import type { RawEvent } from '../../../snapshot/types.ts';
import { ZONE } from '../../../core/zone.ts';

export const NOW = new Date('2026-11-21T17:00:00Z');
/** 14 days back, 90 ahead: 2026-11-07T00:00 to 2027-02-19T23:59:59.999, Los Angeles time. */
export const WINDOW: ParseWindow = buildWindow(NOW);

export function fixture(name: string): string {
  return readFileSync(new URL(`../../fixtures/feeds/${name}`, import.meta.url), 'utf8');
}

/** Epoch ms of a wall-clock ISO string ("2026-11-24T10:30") in a zone (Los Angeles by default). */
export function wall(iso: string, zone: string = ZONE): number {
  const d = DateTime.fromISO(iso, { zone });
  if (!d.isValid) throw new Error(`bad oracle time ${iso}`);
  return d.toMillis();
}

/** "2026-11-24T18:30:00Z": what the iCal parser appends to a series uid, from plain Date. */
export function utcIso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

export function byTitle(events: readonly RawEvent[], title: string): RawEvent {
  const found = events.filter((e) => e.title === title);
  if (found.length !== 1)
    throw new Error(`expected one event titled ${JSON.stringify(title)}, found ${found.length}: ${events.map((e) => e.title).join(' | ')}`);
  return found[0]!;
}

export function byUid(events: readonly RawEvent[], uid: string): RawEvent {
  const found = events.filter((e) => e.uid === uid);
  if (found.length !== 1) throw new Error(`expected one event with uid ${uid}, found ${found.length}`);
  return found[0]!;
}
