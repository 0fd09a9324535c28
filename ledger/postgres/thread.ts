// The metering thread on the shared PostgreSQL ledger (DATABASE_URL): the same protocol as the
// embedded one (thread.ts), for one of several API nodes that share organizations, keys and usage.
//
// The cap holds across nodes because every grant is decided inside a PostgreSQL transaction that
// has locked the organization's row: usage is the sum of its days, plus the live holds of every
// node. A batch of this node's requests (everything that arrived while the previous batch was
// committing) is one transaction, so one commit covers many responses. A reservation is a row in
// quota_holds with an expiry: a node that dies holding records gives them back when the hold
// expires, and a charge against an expired hold is refused, since its records may have gone to
// someone else. Charges are answered only after their commit.
//
// Other nodes' changes (keys, plans, the current snapshot) arrive by LISTEN/NOTIFY. When
// PostgreSQL cannot be reached, requests are answered `unavailable` at once, the main thread is
// told (readiness), and the thread reconnects by itself.
import { parentPort, workerData } from 'node:worker_threads';
import type pg from 'pg';
import { periodAt } from '../period.ts';
import { decide, type Effects, type MeterView } from '../decide.ts';
import { addCharge, KEY_REFUSALS, type DayCharge } from '../rules.ts';
import { one, openClient, openPool, rows } from './db.ts';
import { migrate } from './migrate.ts';
import { CHANGES_CHANNEL } from './cluster.ts';
import { PgAccounts, PgUsage } from './store.ts';
import {
  ACCOUNT_CALLS,
  type AccountCall,
  type AccountRequest,
  type MeterMessage,
  type MeterReply,
  type MeterRequest,
  type PgMeterWorkerData,
} from '../protocol.ts';
import { type KeyInfo, type AccountsView } from '../accounts.ts';

if (!parentPort) throw new Error('ledger/postgres/thread.ts runs as a worker thread');
const port = parentPort;
const data = workerData as PgMeterWorkerData;
const post = (m: MeterMessage): void => port.postMessage(m);

const pool = openPool(data.database, `family-events ${data.nodeName}`);
const accounts = new PgAccounts(pool);
const usage = new PgUsage(pool);

// ------------------------------------------------------------------ health and reconnection

let healthy = false;
let healthDetail = 'connecting to PostgreSQL';
let probing: NodeJS.Timeout | null = null;
let closing = false;

function setHealth(ok: boolean, detail: string): void {
  if (ok === healthy && detail === healthDetail) return;
  healthy = ok;
  healthDetail = detail;
  post({ type: 'health', ok, detail });
}

/** PostgreSQL failed us: answer `unavailable` until a probe gets through, then re-read everything. */
function lost(err: unknown): void {
  if (closing) return;
  setHealth(false, `PostgreSQL unreachable: ${(err as Error).message}`);
  probing ??= setTimeout(() => void probe(), PROBE_MS);
}

const PROBE_MS = 1000;

// Never rejects (a failure is caught below and sets the next probe), so its callers leave it running.
async function probe(): Promise<void> {
  probing = null;
  if (closing) return;
  try {
    await migrate(data.database, `family-events ${data.nodeName} migrate`);
    await shareWebSecret();
    await refresh();
    await listen();
    await readSnapshot();
    setHealth(true, 'ok');
  } catch (err) {
    if (closing) return;
    setHealth(false, `PostgreSQL unreachable: ${(err as Error).message}`);
    probing = setTimeout(() => void probe(), PROBE_MS);
  }
}

// ------------------------------------------------------------------ accounts, mirrored

let view: AccountsView | null = null;
let keysById = new Map<string, KeyInfo>();
let keysByHash = new Map<string, KeyInfo>();
let revokeTimer: NodeJS.Timeout | null = null;

let refreshing: Promise<void> | null = null;
let refreshAgain = false;

/** Re-reads keys, organizations and plans, and posts them to the main thread. */
function refresh(): Promise<void> {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      const nowMs = Date.now();
      const v = await accounts.view(nowMs);
      view = v;
      keysById = new Map(v.keys.map((k) => [k.keyId, k]));
      keysByHash = new Map(v.keys.map((k) => [k.hash, k]));
      post({ type: 'accounts', keys: v.keys, plans: [...v.plans.values()] });
      if (revokeTimer) clearTimeout(revokeTimer);
      revokeTimer = null;
      // A rolled key's grace ends at an instant nobody announces: re-read then.
      if (Number.isFinite(v.nextRevokeAtMs))
        revokeTimer = setTimeout(() => void refresh().catch(lost), Math.min(2 ** 31 - 1, Math.max(0, v.nextRevokeAtMs - nowMs)));
    } while (refreshAgain);
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

// ------------------------------------------------------------------ changes from other nodes

let listener: pg.Client | null = null;

async function listen(): Promise<void> {
  if (listener) return;
  const client = openClient(data.database, `family-events ${data.nodeName} listen`);
  client.on('error', (err) => {
    if (listener === client) listener = null;
    lost(err);
  });
  client.on('end', () => {
    if (listener === client) {
      listener = null;
      lost(new Error('the change listener was disconnected'));
    }
  });
  client.on('notification', (n) => {
    if (n.channel !== CHANGES_CHANNEL) return;
    if (n.payload === 'snapshot') void readSnapshot().catch(lost);
    else void refresh().catch(lost);
  });
  await client.connect();
  await client.query(`LISTEN ${CHANGES_CHANNEL}`);
  // Closed meanwhile: a listener kept now would keep the thread alive after close().
  if (closing) {
    await client.end().catch(() => undefined);
    return;
  }
  listener = client;
}

let lastSnapshot: string | null = null;

let webSecret: string | null = null;

/**
 * The website key of every node on this ledger, told to the main thread before the ledger is
 * reported healthy (the account pages answer 503 until then, so no form of theirs is checked with
 * a key that is about to change). It never changes once set.
 */
async function shareWebSecret(): Promise<void> {
  if (webSecret !== null) return;
  const ask = (): Promise<{ secret: string } | undefined> => one<{ secret: string }>(pool, 'web_secret_share', { candidate: data.webSecret });
  const row = (await ask()) ?? (await ask());
  if (row === undefined) throw new Error('the web_secret row is neither there nor insertable');
  webSecret = row.secret;
  post({ type: 'web_secret', secret: row.secret });
}

async function readSnapshot(): Promise<void> {
  const row = await one<{ snapshot_id: string }>(pool, 'current_snapshot_get');
  const id = row?.snapshot_id ?? null;
  if (id !== null && id !== lastSnapshot) {
    lastSnapshot = id;
    post({ type: 'snapshot', id });
  }
}

// ------------------------------------------------------------------ account operations

// renameOrg too: each key carries its organization's name.
const CHANGES_KEYS: ReadonlySet<AccountCall> = new Set<AccountCall>(['createKeyFor', 'revokeKey', 'rollKey', 'renameOrg']);
const CALLS: ReadonlySet<string> = new Set(ACCOUNT_CALLS);

async function accountCall(r: AccountRequest): Promise<MeterReply> {
  if (!CALLS.has(r.call)) return { id: r.id, ok: false, code: 'unavailable', detail: `no account operation ${String(r.call)}` };
  if (!healthy) return unavailable(r.id);
  try {
    let result: unknown;
    if (r.call === 'orgUsage') {
      const [orgId, atMs] = r.args;
      if (!view?.orgs.has(orgId)) await refresh();
      const org = view?.orgs.get(orgId);
      const plan = org && view?.plans.get(org.plan);
      result = org && plan ? await usage.report(org, plan, atMs) : { ok: false, reason: 'unknown_org' };
    } else {
      const fn = (accounts as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[r.call]!;
      result = await fn.apply(accounts, r.args as unknown[]);
      // The main thread must know a new key before its creator hears of it.
      if (CHANGES_KEYS.has(r.call)) await refresh();
    }
    return { id: r.id, ok: true, account: result };
  } catch (err) {
    post({ type: 'warning', msg: 'account operation failed', call: r.call, detail: (err as Error).message });
    void check();
    return unavailable(r.id);
  }
}

// ------------------------------------------------------------------ metering

type Op = Exclude<MeterRequest, AccountRequest>;

const unavailable = (id: number, detail = 'The usage ledger cannot be reached right now; retry shortly.'): MeterReply => ({
  id,
  ok: false,
  code: 'unavailable',
  detail,
});
const refused = (id: number, detail: string): MeterReply => ({ id, ok: false, code: 'invalid_api_key', detail });

/** This node's open holds: what a commit needs to know before it reaches the database. */
const holds = new Map<number, { readonly orgId: string; readonly keyId: string; readonly amount: number; readonly expiresAtMs: number }>();

/** sql/postgres/meter_queries.sql › meter_state. */
interface MeterState {
  readonly keys: readonly { readonly id: string; readonly revoked: boolean }[];
  /** Organization → records in live holds. */
  readonly held: Readonly<Record<string, number>>;
  /** Hold id → its amount, for the holds of this batch still alive. */
  readonly live: Readonly<Record<string, number>>;
  /** Records charged per organization in the period at place `o` (1-based) of the batch's periods. */
  readonly used: readonly { readonly org_id: string; readonly o: number; readonly records: number }[];
}

interface OrgState {
  readonly limit: number | null;
  readonly plan: string;
  /** Per period start: records charged so far (this batch's charges included). */
  readonly used: Map<number, number>;
  held: number;
}

async function lookups(ops: readonly Extract<Op, { op: 'lookup' }>[]): Promise<MeterReply[]> {
  const missing = ops.filter((o) => !keysByHash.has(o.hash));
  // A key made on another node a moment ago, before its announcement arrived.
  if (missing.length > 0 && (await rows(pool, 'meter_key_by_hash', { hashes: missing.map((o) => o.hash) })).length > 0) await refresh();
  return ops.map((o) => ({ id: o.id, ok: true, key: keysByHash.get(o.hash) ?? null }));
}

/** One transaction for the batch's quota operations; returns every answer, after the commit. */
async function meter(ops: readonly Op[]): Promise<{ replies: MeterReply[]; charges: number; commitMs: number }> {
  const touched = touchedBy(ops);
  const client = await pool.connect();
  const started = performance.now();
  let batch: Decisions;
  try {
    await client.query('BEGIN');
    batch = decideAll(ops, await readLocked(client, ops, touched));
    await write(client, ops, batch);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release(true);
    throw err;
  }
  client.release();
  const commitMs = performance.now() - started;
  return { replies: await afterCommit(ops, batch), charges: batch.charges, commitMs };
}

/** The organizations, keys and holds of this node that a batch names: what its transaction locks and reads. */
interface Touched {
  readonly orgIds: ReadonlySet<string>;
  readonly keyIds: ReadonlySet<string>;
  readonly holdIds: readonly number[];
}

function touchedBy(ops: readonly Op[]): Touched {
  const orgIds = new Set<string>();
  const keyIds = new Set<string>();
  const holdIds: number[] = [];
  for (const o of ops) {
    if (o.op === 'reserve' || o.op === 'peek' || o.op === 'usage') {
      const key = keysById.get(o.keyId);
      if (key) {
        orgIds.add(key.orgId);
        keyIds.add(key.keyId);
      }
    } else if (o.op === 'commit' || o.op === 'release') {
      const h = holds.get(o.reservation);
      if (h) {
        orgIds.add(h.orgId);
        keyIds.add(h.keyId);
        holdIds.push(o.reservation);
      }
    }
  }
  return { orgIds, keyIds, holdIds };
}

/** What the batch decides from, read in its transaction once the organizations' rows are locked. */
interface Locked {
  readonly orgs: ReadonlyMap<string, OrgState>;
  /** Key → revoked, for the batch's keys the database has. */
  readonly revoked: ReadonlyMap<string, boolean>;
  /** Hold id → its amount, for the batch's holds still alive; a hold leaves once settled. */
  readonly live: Map<number, number>;
}

async function readLocked(client: pg.PoolClient, ops: readonly Op[], t: Touched): Promise<Locked> {
  const orgs = new Map<string, OrgState>();
  for (const o of await rows<{ id: string; plan: string; monthly_record_limit: number | null }>(client, 'meter_lock_orgs', { org_ids: [...t.orgIds] })) {
    orgs.set(o.id, { limit: o.monthly_record_limit, plan: o.plan, used: new Map(), held: 0 });
  }
  // One statement for everything else the batch decides from (after the locks: see meter_state).
  const periods = [...new Set(ops.flatMap((o) => ('atMs' in o ? [periodAt(o.atMs).startMs] : [])))].map((ms) => periodAt(ms));
  const state = await one<MeterState>(client, 'meter_state', {
    key_ids: [...t.keyIds],
    org_ids: [...t.orgIds],
    hold_ids: t.holdIds,
    first_days: periods.map((p) => p.firstDay),
    last_days: periods.map((p) => p.lastDay),
  });
  if (!state) throw new Error('meter_state returned no row');
  const revoked = new Map(state.keys.map((k) => [k.id, k.revoked]));
  for (const [orgId, amount] of Object.entries(state.held)) orgs.get(orgId)!.held = amount;
  const live = new Map(Object.entries(state.live).map(([id, amount]) => [Number(id), amount]));
  for (const org of orgs.values()) for (const p of periods) org.used.set(p.startMs, 0);
  for (const u of state.used) orgs.get(u.org_id)?.used.set(periods[u.o - 1]!.startMs, u.records);
  return { orgs, revoked, live };
}

/** A batch decided: its answers as they stand before the commit, and what the commit writes. */
interface Decisions {
  readonly replies: MeterReply[];
  /** Holds to open; a reservation's answer names its place here until the database numbers it (id -1 until then). */
  readonly newHolds: { id: number; readonly orgId: string; readonly keyId: string; readonly amount: number }[];
  /** Holds this batch commits or releases that were still alive. */
  readonly settled: number[];
  readonly charged: Map<string, DayCharge>;
  charges: number;
}

/** Every operation of the batch, in order, by decide(); each sees the effects of those before it. */
function decideAll(ops: readonly Op[], { orgs, revoked, live }: Locked): Decisions {
  const batch: Decisions = { replies: [], newHolds: [], settled: [], charged: new Map(), charges: 0 };
  const { replies, newHolds, settled } = batch;

  /** The organization of `key` (locked in this transaction) as decide() reads it. */
  const viewOf = (key: { readonly orgId: string }, atMs: number): MeterView => {
    const org = orgs.get(key.orgId)!;
    return { orgId: key.orgId, plan: org.plan, limit: org.limit, used: org.used.get(periodAt(atMs).startMs) ?? 0, held: org.held, atMs };
  };
  /** Writes a decision about a request at `atMs` into the batch (new holds are numbered by the caller). */
  const apply = (e: Effects, key: { readonly keyId: string; readonly orgId: string }, atMs: number): void => {
    const org = orgs.get(key.orgId)!;
    org.held += e.hold - e.free;
    if (e.charge === null) return;
    addCharge(batch.charged, key, e.charge, atMs);
    const startMs = periodAt(atMs).startMs;
    org.used.set(startMs, (org.used.get(startMs) ?? 0) + e.charge);
    batch.charges++;
  };
  /** A key that may be used now: known here, its organization locked, and not revoked in the database. */
  const activeKey = (id: number, keyId: string): KeyInfo | MeterReply => {
    const key = keysById.get(keyId);
    const isRevoked = revoked.get(keyId);
    if (key === undefined || isRevoked === undefined) return refused(id, KEY_REFUSALS.unknown);
    if (isRevoked) return refused(id, KEY_REFUSALS.revoked);
    if (!orgs.has(key.orgId)) return refused(id, KEY_REFUSALS.orphan);
    return key;
  };

  for (const o of ops) {
    switch (o.op) {
      case 'lookup':
        break;
      case 'peek': {
        const key = activeKey(o.id, o.keyId);
        replies.push('ok' in key ? key : { id: o.id, ok: true, quota: decide({ op: 'peek' }, viewOf(key, o.atMs)).quota });
        break;
      }
      case 'usage': {
        const key = activeKey(o.id, o.keyId);
        // The body is read after the commit (it includes this batch's charges); marked for then.
        replies.push('ok' in key ? key : { id: o.id, ok: true, usage: null as never, quota: decide({ op: 'peek' }, viewOf(key, o.atMs)).quota });
        break;
      }
      case 'reserve': {
        const key = activeKey(o.id, o.keyId);
        if ('ok' in key) {
          replies.push(key);
          break;
        }
        const d = decide({ op: 'reserve', want: o.want, settle: o.settle }, viewOf(key, o.atMs));
        apply(d, key, o.atMs);
        // The reservation's id is filled in once the database has numbered the hold.
        if (d.hold > 0) newHolds.push({ id: -1, orgId: key.orgId, keyId: key.keyId, amount: d.hold });
        replies.push({ id: o.id, ok: true, granted: d.granted, reservation: d.hold > 0 ? newHolds.length - 1 : null, quota: d.quota });
        break;
      }
      case 'commit': {
        const h = holds.get(o.reservation);
        const amount = live.get(o.reservation);
        if (h === undefined || amount === undefined) {
          holds.delete(o.reservation);
          replies.push(unavailable(o.id, 'The quota reservation expired before the answer was ready; retry the request.'));
          break;
        }
        live.delete(o.reservation);
        settled.push(o.reservation);
        // Decided by the hold's organization, whatever became of its key since.
        const d = decide({ op: 'commit', amount, delivered: o.delivered }, viewOf(h, o.atMs));
        apply(d, h, o.atMs);
        replies.push({ id: o.id, ok: true, quota: d.quota });
        break;
      }
      case 'release': {
        const amount = live.get(o.reservation);
        const h = holds.get(o.reservation);
        if (amount !== undefined && h !== undefined) {
          live.delete(o.reservation);
          settled.push(o.reservation);
          orgs.get(h.orgId)!.held -= decide({ op: 'release', amount }).free;
        }
        break;
      }
    }
  }
  return batch;
}

/** One statement: opens the batch's holds (numbering them), closes those it settled or released, and adds its charges. */
async function write(client: pg.PoolClient, ops: readonly Op[], { newHolds, settled, charged }: Decisions): Promise<void> {
  const released = ops.flatMap((o) => (o.op === 'release' && !settled.includes(o.reservation) && holds.has(o.reservation) ? [o.reservation] : []));
  const c = [...charged.values()];
  if (newHolds.length + settled.length + released.length + c.length > 0) {
    const ids = await rows<{ id: number }>(client, 'meter_write', {
      hold_org_ids: newHolds.map((h) => h.orgId),
      hold_key_ids: newHolds.map((h) => h.keyId),
      hold_amounts: newHolds.map((h) => h.amount),
      node: data.nodeName,
      ttl_s: data.holdTtlMs / 1000,
      done_ids: [...settled, ...released],
      org_ids: c.map((r) => r.orgId),
      key_ids: c.map((r) => r.keyId),
      days: c.map((r) => r.day),
      records: c.map((r) => r.records),
      requests: c.map((r) => r.requests),
    });
    newHolds.forEach((h, i) => (h.id = ids[i]!.id));
  }
}

/** Committed: this node's holds follow the ledger, and the answers get their holds' numbers and usage bodies. */
async function afterCommit(ops: readonly Op[], { replies, newHolds, settled }: Decisions): Promise<MeterReply[]> {
  // The holds are real now, and the releases and commits gone.
  for (const id of [...settled, ...ops.flatMap((o) => (o.op === 'release' ? [o.reservation] : []))]) holds.delete(id);
  const expiresAtMs = Date.now() + data.holdTtlMs;
  for (const h of newHolds) holds.set(h.id, { orgId: h.orgId, keyId: h.keyId, amount: h.amount, expiresAtMs });
  const usageOps = new Map(ops.flatMap((o) => (o.op === 'usage' ? [[o.id, o] as const] : [])));
  const out: MeterReply[] = [];
  for (const r of replies) {
    if (r.ok && 'reservation' in r && r.reservation !== null) out.push({ ...r, reservation: newHolds[r.reservation]!.id });
    else if (r.ok && 'usage' in r) {
      const asked = usageOps.get(r.id)!;
      const key = keysById.get(asked.keyId)!;
      const org = view?.orgs.get(key.orgId);
      out.push(org ? { ...r, usage: await usage.report(org, view?.plans.get(org.plan) ?? key.plan, asked.atMs) } : refused(r.id, KEY_REFUSALS.orphan));
    } else out.push(r);
  }
  return out;
}

// ------------------------------------------------------------------ batches

let queue: MeterRequest[] = [];
let running = false;

async function flush(): Promise<void> {
  if (running) return;
  running = true;
  try {
    while (queue.length > 0) {
      const all = queue;
      queue = [];
      for (const r of all)
        if (r.op === 'account') void accountCall(r).then((reply) => post({ type: 'replies', replies: [reply], batch: { ops: 0, charges: 0, commitMs: 0 } }));
      const ops = all.filter((r): r is Op => r.op !== 'account');
      if (ops.length === 0) continue;
      if (!healthy) {
        post({ type: 'replies', replies: ops.flatMap((o) => ('id' in o ? [unavailable(o.id)] : [])), batch: { ops: 0, charges: 0, commitMs: 0 } });
        continue;
      }
      try {
        const lookupOps = ops.filter((o): o is Extract<Op, { op: 'lookup' }> => o.op === 'lookup');
        if (lookupOps.length) post({ type: 'replies', replies: await lookups(lookupOps), batch: { ops: 0, charges: 0, commitMs: 0 } });
        const rest = ops.filter((o) => o.op !== 'lookup');
        if (rest.length === 0) continue;
        const done = await meter(rest);
        post({ type: 'replies', replies: done.replies, batch: { ops: rest.length, charges: done.charges, commitMs: done.commitMs } });
      } catch (err) {
        // Rolled back (or never reached the database): nothing of this batch was charged or held,
        // so none of its answers may be sent as success.
        post({ type: 'warning', msg: 'usage ledger write failed', detail: (err as Error).message });
        post({
          type: 'replies',
          replies: ops.flatMap((o) => (o.op !== 'lookup' && 'id' in o ? [unavailable(o.id)] : [])),
          batch: { ops: 0, charges: 0, commitMs: 0 },
        });
        void check();
      }
    }
  } finally {
    running = false;
  }
}

/** After a failure: is it PostgreSQL that is gone (then reconnect), or was it this batch? */
async function check(): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    lost(err);
  }
}

async function close(): Promise<void> {
  closing = true;
  while (running || queue.length) {
    await flush();
    await new Promise((r) => setTimeout(r, 5));
  }
  if (probing) clearTimeout(probing);
  if (revokeTimer) clearTimeout(revokeTimer);
  clearInterval(sweep);
  const l = listener;
  listener = null;
  await l?.end().catch(() => undefined);
  await pool.end().catch(() => undefined);
  post({ type: 'closed' });
  port.close();
}

port.on('message', (m: readonly MeterRequest[] | { op: 'close' }) => {
  if (closing) return;
  if (!Array.isArray(m)) {
    void close();
    return;
  }
  for (const r of m as readonly MeterRequest[]) queue.push(r);
  if (!running) setImmediate(() => void flush());
});

/** Expired holds and spent links are swept by every node now and then; the statements are idempotent. */
const SWEEP_EVERY_MS = 3600_000;
const sweep = setInterval(() => {
  // A hold whose answer never came back (neither committed nor released) is dead in the ledger too.
  const nowMs = Date.now();
  for (const [id, h] of holds) if (h.expiresAtMs < nowMs) holds.delete(id);
  if (!healthy) return;
  void rows(pool, 'meter_holds_sweep').catch(() => undefined);
  void accounts.purgeExpired(Date.now()).catch(() => undefined);
}, SWEEP_EVERY_MS);
sweep.unref();

void probe();
