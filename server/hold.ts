// A live route's hold on its organization's records, from the grant to the charge. Taken with one
// call (holdRecords), settled once: commit(delivered) charges what the answer delivered and gives
// the rest back, release() gives it all back. Both are idempotent and release() after commit() does
// nothing, so a route settles with `try { … commit … } finally { hold.release() }` and no path (a
// failed search, a client gone, a HEAD, a 304) leaves records held until the ledger's expiry.
// Either returns the quota to tell the client, so no route computes one itself.
import { meterError } from './auth.ts';
import type { Client, Meter, Reserved } from './meter.ts';
import { quotaRefused } from './quota.ts';
import type { QuotaState } from '../ledger/accounts.ts';

export interface HoldOptions {
  /** Charge at once when all of `want` is granted (the answer is known already): nothing is held. */
  readonly settle: boolean;
  readonly atMs: number;
  /** The client: one that leaves while waiting for records gives up its place (Meter.reserve). */
  readonly client?: Client;
}

/**
 * Up to `want` records of the key's organization, as Meter.reserve grants them (waiting in line
 * while others of the organization hold the rest). Throws the problem the client gets: 401/503
 * when the ledger refuses or cannot answer, 429 when nothing could be granted.
 */
export async function holdRecords(meter: Meter, keyId: string, want: number, o: HoldOptions): Promise<Hold> {
  const r = await meter.reserve(keyId, want, o.settle, o.atMs, o.client);
  if (!r.ok) throw meterError(r);
  if (r.granted === 0 && want > 0) throw quotaRefused(r.quota, o.atMs);
  return new Hold(meter, r, o.atMs);
}

export class Hold {
  /** Records the route may hand out: all it wanted, or what the quota left. */
  readonly granted: number;
  private readonly meter: Meter;
  private readonly atMs: number;
  /** The ledger's reservation while records are held; null once settled (or charged at the grant). */
  private reservation: number | null;
  private quota: QuotaState;
  private committed: Promise<QuotaState> | null = null;
  private released = false;

  constructor(meter: Meter, r: Reserved, atMs: number) {
    this.meter = meter;
    this.granted = r.granted;
    this.reservation = r.reservation;
    this.quota = r.quota;
    this.atMs = atMs;
  }

  /**
   * Charges `delivered` of the granted records (never more), durably, and gives the rest back;
   * resolves with the quota after. A grant charged at once (settle) resolves with its quota.
   * Throws the problem the client gets when the ledger cannot charge (the answer must not leave).
   */
  commit(delivered: number): Promise<QuotaState> {
    if (this.committed) return this.committed;
    if (this.released) throw new Error('a hold was committed after its release');
    const reservation = this.reservation;
    this.reservation = null;
    this.committed =
      reservation === null
        ? Promise.resolve(this.quota)
        : this.meter.commit(reservation, delivered, this.atMs).then((done) => {
            if (!done.ok) throw meterError(done);
            this.quota = done.quota;
            return done.quota;
          });
    return this.committed;
  }

  /**
   * Gives whatever is still held back and returns the quota to tell the client: as granted, plus
   * the records given back. After commit() it does nothing (and returns the latest quota known).
   */
  release(): QuotaState {
    if (this.committed || this.released) return this.quota;
    this.released = true;
    const reservation = this.reservation;
    this.reservation = null;
    if (reservation !== null) {
      this.meter.release(reservation);
      if (this.quota.remaining !== null) this.quota = { ...this.quota, remaining: this.quota.remaining + this.granted };
    }
    return this.quota;
  }
}
