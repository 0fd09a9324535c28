// The metering decision, written once for both ledgers. Given what the store read about an
// organization (records charged in the period, records held by open reservations, its cap), it
// says what a peek, reserve, commit or release writes and what it answers. Plain arithmetic: the
// threads (thread.ts on SQLite, pg-thread.ts on PostgreSQL) read the view, call decide, and do the
// I/O around it: writing usage rows and holds, numbering reservations, answering after the commit.
import { periodAt } from './period.ts';
import type { QuotaState } from './accounts.ts';

/** An organization as the store read it, at the instant of the request. */
export interface MeterView {
  readonly orgId: string;
  /** Its plan's name and records a period (null: no cap). */
  readonly plan: string;
  readonly limit: number | null;
  /** Records charged in the period holding `atMs`, this batch's earlier charges included. */
  readonly used: number;
  /** Records set aside by open reservations (of every node, on the shared ledger), whatever the period. */
  readonly held: number;
  readonly atMs: number;
}

/** A request as decide sees it: a reservation's ops carry what the reservation holds. */
export type MeterOp =
  | { readonly op: 'peek' }
  | { readonly op: 'reserve'; readonly want: number; readonly settle: boolean }
  | { readonly op: 'commit'; readonly amount: number; readonly delivered: number }
  | { readonly op: 'release'; readonly amount: number };

/** What a decision writes. The thread applies it; nothing else changes usage or holds. */
export interface Effects {
  /** One charged response of this many records (a usage row of the batch); null: nothing charged. */
  readonly charge: number | null;
  /** Records a new reservation holds (the thread opens and numbers it); 0: none is opened. */
  readonly hold: number;
  /** Records of a settled reservation given back. */
  readonly free: number;
}

/** A decision that answers: the quota the organization is left with once its effects are written. */
export interface Answer extends Effects {
  readonly quota: QuotaState;
}

export interface Grant extends Answer {
  readonly granted: number;
}

/** An organization's quota at `atMs`: `used` charged in the period, `held` set aside for answers being computed. */
export function quotaState(orgId: string, plan: string, limit: number | null, used: number, held: number, atMs: number): QuotaState {
  const p = periodAt(atMs);
  return {
    orgId,
    plan,
    limit,
    used,
    remaining: limit === null ? null : Math.max(0, limit - used - held),
    periodStartMs: p.startMs,
    resetMs: p.resetMs,
  };
}

const after = (v: MeterView, e: Effects): QuotaState => quotaState(v.orgId, v.plan, v.limit, v.used + (e.charge ?? 0), v.held + e.hold - e.free, v.atMs);

const NOTHING: Effects = { charge: null, hold: 0, free: 0 };

export function decide(op: Extract<MeterOp, { op: 'reserve' }>, view: MeterView): Grant;
export function decide(op: Extract<MeterOp, { op: 'peek' | 'commit' }>, view: MeterView): Answer;
export function decide(op: Extract<MeterOp, { op: 'release' }>): Effects;
/**
 * - peek: the quota, nothing written.
 * - reserve: grants up to `want` of what is neither charged nor held. With `settle` and all of it
 *   granted, the records are charged at once (the answer is known: no reservation); nothing
 *   granted opens nothing; otherwise the grant is held until its commit or release.
 * - commit: the hold is given back and what was delivered charged, never more than was held (a key
 *   revoked since still pays for what it was given).
 * - release: the hold is given back.
 */
export function decide(op: MeterOp, view?: MeterView): Effects | Answer | Grant {
  if (op.op === 'release') return { ...NOTHING, free: op.amount };
  if (view === undefined) throw new TypeError(`decide(${op.op}) needs the organization's view`);
  switch (op.op) {
    case 'peek':
      return { ...NOTHING, quota: after(view, NOTHING) };
    case 'reserve': {
      const { remaining } = after(view, NOTHING);
      const granted = remaining === null ? op.want : Math.min(op.want, remaining);
      const e: Effects = op.settle && granted === op.want ? { ...NOTHING, charge: granted } : granted === 0 ? NOTHING : { ...NOTHING, hold: granted };
      return { ...e, granted, quota: after(view, e) };
    }
    case 'commit': {
      const e: Effects = { charge: Math.min(Math.max(0, op.delivered), op.amount), hold: 0, free: op.amount };
      return { ...e, quota: after(view, e) };
    }
  }
}
