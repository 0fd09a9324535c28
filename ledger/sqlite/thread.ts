// The metering thread: the one writer of the usage ledger. Every quota decision happens here, one
// at a time, so concurrent requests on one organization can never together exceed its cap.
//
// Group commit: requests arriving while a batch is being committed wait in the port; the next
// batch takes them all and charges them in one transaction, so one fsync covers many responses.
// A charge is answered only after its transaction is on disk; answers that write nothing
// (reservations, refusals, lookups) go out before the batch's fsync.
//
// It is also the server's one connection to accounts.sqlite, and runs the website's account
// operations there (the main thread never runs SQL). Those commit on their own, before the batch.
import { parentPort, workerData } from 'node:worker_threads';
import { periodAt } from '../period.ts';
import { decide, type Effects, type MeterView } from '../decide.ts';
import { addCharge, KEY_REFUSALS, type DayCharge } from '../rules.ts';
import { AccountsDb, UsageDb, takeWriterLock } from './store.ts';
import {
  ACCOUNT_CALLS,
  type AccountCall,
  type AccountCalls,
  type AccountRequest,
  type MeterControl,
  type MeterMessage,
  type MeterReply,
  type MeterRequest,
  type MeterWorkerData,
} from '../protocol.ts';
import { type KeyInfo, type Plan, type AccountsView } from '../accounts.ts';

if (!parentPort) throw new Error('ledger/sqlite/thread.ts runs as a worker thread');
const port = parentPort;
const data = workerData as MeterWorkerData;
const post = (m: MeterMessage): void => port.postMessage(m);

let lock: { release(): void };
let accounts: AccountsDb;
let usage: UsageDb;
try {
  lock = takeWriterLock(data.ledgerDir);
  accounts = AccountsDb.open(data.ledgerDir);
  usage = UsageDb.openWriter(data.ledgerDir);
} catch (err) {
  post({ type: 'failed', detail: (err as Error).message });
  port.close();
  throw err;
}

let view: AccountsView;
let keysById = new Map<string, KeyInfo>();
let keysByHash = new Map<string, KeyInfo>();
let version = -1;

/**
 * Re-reads the accounts file when another process (the command line) has committed to it, when a
 * scheduled revocation has come, or when `force`d: data_version does not change for this
 * connection's own commits, so after changing keys itself the thread must say so.
 */
function refresh(force = false): void {
  const v = accounts.dataVersion();
  const nowMs = Date.now();
  if (!force && v === version && nowMs < view.nextRevokeAtMs) return;
  version = v;
  view = accounts.view(nowMs);
  keysById = new Map(view.keys.map((k) => [k.keyId, k]));
  keysByHash = new Map(view.keys.map((k) => [k.hash, k]));
  post({ type: 'accounts', keys: view.keys, plans: [...view.plans.values()] });
}

interface OrgPeriod {
  readonly startMs: number;
  readonly resetMs: number;
  used: number;
}
const periods = new Map<string, OrgPeriod>();
/** Records held by open reservations, per organization (whatever the period). */
const held = new Map<string, number>();
const reservations = new Map<number, { readonly orgId: string; readonly keyId: string; readonly amount: number }>();
let nextReservation = 1;

/** The organization's usage in the period holding `atMs`, read from the ledger on first use. */
function periodOf(orgId: string, atMs: number): OrgPeriod {
  let p = periods.get(orgId);
  if (p === undefined || atMs < p.startMs || atMs >= p.resetMs) {
    const bounds = periodAt(atMs);
    p = { startMs: bounds.startMs, resetMs: bounds.resetMs, used: usage.periodTotals(orgId, atMs).records };
    periods.set(orgId, p);
  }
  return p;
}

/** The plan an organization is on now (an operator may have moved it since the key was read). */
function planOf(key: KeyInfo): Plan {
  const org = view.orgs.get(key.orgId);
  return (org && view.plans.get(org.plan)) ?? key.plan;
}

/** The organization of `key` as decide() reads it. */
function viewOf(key: KeyInfo, atMs: number): MeterView {
  const plan = planOf(key);
  return { orgId: key.orgId, plan: plan.name, limit: plan.monthlyRecordLimit, used: periodOf(key.orgId, atMs).used, held: held.get(key.orgId) ?? 0, atMs };
}

/** Charges of this batch, summed per key and day: one upsert per key a batch, not one per request. */
const unwritten = new Map<string, DayCharge>();

/** Writes the batch's charges into the open transaction. */
function writeCharges(): void {
  for (const r of unwritten.values()) usage.charge(r.orgId, r.keyId, r.day, r.records, r.requests);
  unwritten.clear();
}

function hold(orgId: string, amount: number): void {
  held.set(orgId, (held.get(orgId) ?? 0) + amount);
}

/** Writes a decision about a request at `atMs` (a new hold is numbered by the caller); 1 when it charged. */
function apply(e: Effects, key: { readonly keyId: string; readonly orgId: string }, atMs: number): number {
  hold(key.orgId, e.hold - e.free);
  if (e.charge === null) return 0;
  addCharge(unwritten, key, e.charge, atMs);
  periodOf(key.orgId, atMs).used += e.charge;
  return 1;
}

/** Gives a reservation's records back (a release, or a commit that cannot charge). */
function giveBack(res: { readonly orgId: string; readonly amount: number }): void {
  hold(res.orgId, -decide({ op: 'release', amount: res.amount }).free);
}

const refused = (id: number, detail: string): MeterReply => ({ id, ok: false, code: 'invalid_api_key', detail });

/** A key that may still be used: known and not revoked, as of the accounts file right now. */
function activeKey(id: number, keyId: string): KeyInfo | MeterReply {
  const key = keysById.get(keyId);
  if (key === undefined) return refused(id, KEY_REFUSALS.unknown);
  if (key.revoked) return refused(id, KEY_REFUSALS.revoked);
  return key;
}

/** The account calls as the thread runs them: the store's, with keys' last use from the usage ledger. */
const accountCalls: AccountCalls = {
  issueLoginToken: (...a) => accounts.issueLoginToken(...a),
  spendLoginToken: (...a) => accounts.spendLoginToken(...a),
  peekLoginToken: (...a) => accounts.peekLoginToken(...a),
  attachLoginCode: (...a) => accounts.attachLoginCode(...a),
  spendLoginCode: (...a) => accounts.spendLoginCode(...a),
  userOf: (...a) => accounts.userOf(...a),
  signInByEmail: (...a) => accounts.signInByEmail(...a),
  signInByIdentity: (...a) => accounts.signInByIdentity(...a),
  createSession: (...a) => accounts.createSession(...a),
  touchSession: (...a) => accounts.touchSession(...a),
  endSession: (...a) => accounts.endSession(...a),
  endAllSessions: (...a) => accounts.endAllSessions(...a),
  organizationsOf: (...a) => accounts.organizationsOf(...a),
  acceptInvite: (...a) => accounts.acceptInvite(...a),
  joinByInvite: (...a) => accounts.joinByInvite(...a),
  members: (...a) => accounts.members(...a),
  keysOf: (orgId) => accounts.keysOf(orgId, usage.lastUsedByKey(orgId)),
  createKeyFor: (...a) => accounts.createKeyFor(...a),
  revokeKey: (...a) => accounts.revokeKey(...a),
  rollKey: (...a) => accounts.rollKey(...a),
  renameOrg: (...a) => accounts.renameOrg(...a),
  pendingInvites: (...a) => accounts.pendingInvites(...a),
  cancelInvite: (...a) => accounts.cancelInvite(...a),
  removeMember: (...a) => accounts.removeMember(...a),
  orgUsage: (orgId, atMs) => {
    // The thread's own commits (a sign-up's new organization) do not move data_version: re-read once.
    if (!view.orgs.has(orgId)) refresh(true);
    const org = view.orgs.get(orgId);
    const plan = org && view.plans.get(org.plan);
    // Earlier batches' charges are committed before this one's account calls run.
    return org && plan ? usage.report(org, plan, atMs) : { ok: false, reason: 'unknown_org' };
  },
};

/** Calls after which the main thread's copy of the keys (each with its organization's name) is stale. */
const CHANGES_KEYS: ReadonlySet<AccountCall> = new Set<AccountCall>(['createKeyFor', 'revokeKey', 'rollKey', 'renameOrg']);
const CALLS: ReadonlySet<string> = new Set(ACCOUNT_CALLS);

/**
 * Runs the batch's account operations, each its own transaction: one that fails (the command line
 * holding the file past busy_timeout) answers `unavailable` and the others go on. The new keys are
 * posted before the answers, so a key is known to the main thread by the time its creator hears of it.
 */
function runAccountCalls(ops: readonly AccountRequest[]): MeterReply[] {
  const replies: MeterReply[] = [];
  let keysChanged = false;
  for (const r of ops) {
    if (!CALLS.has(r.call)) {
      replies.push({ id: r.id, ok: false, code: 'unavailable', detail: `no account operation ${String(r.call)}` });
      continue;
    }
    try {
      const fn = accountCalls[r.call] as (...args: unknown[]) => unknown;
      replies.push({ id: r.id, ok: true, account: fn(...r.args) });
      keysChanged ||= CHANGES_KEYS.has(r.call);
    } catch (err) {
      post({ type: 'warning', msg: 'account operation failed', call: r.call, detail: (err as Error).message });
      replies.push({ id: r.id, ok: false, code: 'unavailable', detail: 'The accounts store cannot be reached right now; retry shortly.' });
    }
  }
  if (keysChanged) refresh(true);
  return replies;
}

/** Handles one request; its answer goes to `now` (nothing written) or `afterCommit`. */
function handle(r: Exclude<MeterRequest, AccountRequest>, now: MeterReply[], afterCommit: MeterReply[]): number {
  switch (r.op) {
    case 'lookup':
      now.push({ id: r.id, ok: true, key: keysByHash.get(r.hash) ?? null });
      return 0;
    case 'peek': {
      const key = activeKey(r.id, r.keyId);
      if ('ok' in key) now.push(key);
      else now.push({ id: r.id, ok: true, quota: decide({ op: 'peek' }, viewOf(key, r.atMs)).quota });
      return 0;
    }
    case 'usage': {
      const key = activeKey(r.id, r.keyId);
      if ('ok' in key) {
        now.push(key);
        return 0;
      }
      const org = view.orgs.get(key.orgId);
      if (!org) {
        now.push(refused(r.id, KEY_REFUSALS.orphan));
        return 0;
      }
      // Read inside this batch's transaction, so it includes the charges just before it.
      writeCharges();
      afterCommit.push({ id: r.id, ok: true, usage: usage.report(org, planOf(key), r.atMs), quota: decide({ op: 'peek' }, viewOf(key, r.atMs)).quota });
      return 0;
    }
    case 'reserve': {
      const key = activeKey(r.id, r.keyId);
      if ('ok' in key) {
        now.push(key);
        return 0;
      }
      const d = decide({ op: 'reserve', want: r.want, settle: r.settle }, viewOf(key, r.atMs));
      let reservation: number | null = null;
      if (d.hold > 0) {
        reservation = nextReservation++;
        reservations.set(reservation, { orgId: key.orgId, keyId: key.keyId, amount: d.hold });
      }
      const charged = apply(d, key, r.atMs);
      // A charge is answered after its fsync; a grant that wrote nothing before it.
      (charged ? afterCommit : now).push({ id: r.id, ok: true, granted: d.granted, reservation, quota: d.quota });
      return charged;
    }
    case 'commit': {
      const res = reservations.get(r.reservation);
      if (res === undefined) {
        now.push({ id: r.id, ok: false, code: 'unavailable', detail: 'The quota reservation was lost; retry the request.' });
        return 0;
      }
      reservations.delete(r.reservation);
      // Revoked keys are here too (decide charges a commit whatever became of its key); a key gone
      // from the accounts file leaves no plan to decide by.
      const key = keysById.get(res.keyId);
      if (key === undefined) {
        giveBack(res);
        now.push({ id: r.id, ok: false, code: 'unavailable', detail: 'The key disappeared from the accounts store.' });
        return 0;
      }
      const d = decide({ op: 'commit', amount: res.amount, delivered: r.delivered }, viewOf(key, r.atMs));
      afterCommit.push({ id: r.id, ok: true, quota: d.quota });
      return apply(d, key, r.atMs);
    }
    case 'release': {
      const res = reservations.get(r.reservation);
      if (res !== undefined) {
        reservations.delete(r.reservation);
        giveBack(res);
      }
      return 0;
    }
  }
}

let queue: MeterRequest[] = [];
let scheduled = false;
let closing = false;

function flush(): void {
  scheduled = false;
  const all = queue;
  queue = [];
  if (all.length === 0) return;
  const accountOps = all.filter((r): r is AccountRequest => r.op === 'account');
  const ops = all.filter((r): r is Exclude<MeterRequest, AccountRequest> => r.op !== 'account');
  if (accountOps.length) post({ type: 'replies', replies: runAccountCalls(accountOps), batch: { ops: 0, charges: 0, commitMs: 0 } });
  if (ops.length === 0) return;
  const now: MeterReply[] = [];
  let afterCommit: MeterReply[] = [];
  let charges = 0;
  let commitMs = 0;
  let posted = false;
  try {
    refresh();
    usage.transaction(() => {
      for (const r of ops) charges += handle(r, now, afterCommit);
      writeCharges();
      // Answers that wrote nothing leave before the fsync.
      if (now.length) post({ type: 'replies', replies: now, batch: { ops: 0, charges: 0, commitMs: 0 } });
      posted = true;
      commitMs = performance.now();
    });
    commitMs = performance.now() - commitMs;
  } catch (err) {
    // The transaction rolled back: nothing in this batch was charged, so none of its responses may
    // be sent, and what memory counted for it is undone (usage is re-read from the file; holds
    // granted in this batch but never announced are dropped). Every request gets an answer.
    unwritten.clear();
    periods.clear();
    if (!posted) {
      for (const a of now) {
        const res = 'reservation' in a && a.reservation !== null ? reservations.get(a.reservation) : undefined;
        if (res && 'reservation' in a && a.reservation !== null) {
          reservations.delete(a.reservation);
          giveBack(res);
        }
      }
    }
    const detail = 'The usage ledger cannot be written right now; retry shortly.';
    const answered = new Set((posted ? now : []).map((a) => a.id));
    afterCommit = ops.flatMap((o) => ('id' in o && !answered.has(o.id) ? [{ id: o.id, ok: false as const, code: 'unavailable' as const, detail }] : []));
    post({ type: 'warning', msg: 'usage ledger write failed', detail: (err as Error).message });
    charges = 0;
  }
  post({ type: 'replies', replies: afterCommit, batch: { ops: ops.length, charges, commitMs } });
}

function close(): void {
  closing = true;
  flush();
  clearInterval(poll);
  usage.close();
  accounts.close();
  lock.release();
  post({ type: 'closed' });
  port.close();
}

port.on('message', (m: readonly MeterRequest[] | MeterControl) => {
  if (closing) return;
  if (!Array.isArray(m)) {
    close();
    return;
  }
  for (const r of m as readonly MeterRequest[]) queue.push(r);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
});

/** Spent links and ended sessions are swept this often (and at start), on the wall clock they expire by. */
const PURGE_EVERY_MS = 3600_000;
let purgedAt = -Infinity;

function purge(): void {
  const nowMs = Date.now();
  if (nowMs - purgedAt < PURGE_EVERY_MS) return;
  purgedAt = nowMs;
  accounts.purgeExpired(nowMs);
}

// New keys and revocations reach the main thread without waiting for traffic. A failed read is
// retried at the next tick or batch; it must not end the thread.
const poll = setInterval(() => {
  try {
    refresh();
    purge();
  } catch (err) {
    post({ type: 'warning', msg: 'accounts store read failed', detail: (err as Error).message });
  }
}, data.accountsPollMs);
refresh(true);
