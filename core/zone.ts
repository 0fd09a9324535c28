// The region's time zone: every date the API shows or filters on is a wall-clock time there.
import { IANAZone, type Zone } from 'luxon';

export const ZONE = 'America/Los_Angeles';

/**
 * America/Los_Angeles with its UTC offset memoized per 15 minutes. Luxon asks Intl for the offset
 * on every operation (formatToParts), which was most of a build's CPU; real zone transitions fall
 * on 15-minute boundaries, so a bucket's offset is exact.
 */
class MemoizedZone extends IANAZone {
  readonly #offsets = new Map<number, number>();
  override offset(ts: number): number {
    const bucket = Math.floor(ts / 900_000);
    let o = this.#offsets.get(bucket);
    if (o === undefined) {
      o = super.offset(ts);
      if (this.#offsets.size > 500_000) this.#offsets.clear();
      this.#offsets.set(bucket, o);
    }
    return o;
  }
}

/** The region's zone: pass this (not the string) to luxon on hot paths. */
export const LA: Zone = new MemoizedZone(ZONE);
