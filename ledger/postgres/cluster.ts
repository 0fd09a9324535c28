// What the nodes on one shared ledger hold in common beyond its rows: the channel that tells every
// node of a change, the snapshot every node serves, and the lock that lets one node alone build
// the first snapshot of an empty shared volume.
import type { DatabaseSettings } from '../../core/config.ts';
import { openClient, pgQuery, type Queryable } from './db.ts';
import { migrate } from './migrate.ts';

/** The channel every change that other nodes must see is announced on (payload: its kind). */
export const CHANGES_CHANNEL = 'family_events_ledger';
export type ChangeKind = 'accounts' | 'snapshot';

/** Announces a change to every node, inside the caller's transaction (delivered at its commit). */
export async function announce(db: Queryable, kind: ChangeKind): Promise<void> {
  await db.query({ name: 'fe_announce', text: 'SELECT pg_notify($1, $2)', values: [CHANGES_CHANNEL, kind] });
}

// Another fixed number (migrate.ts has the first): "a node is building the first snapshot of an empty shared volume".
const FIRST_BUILD_LOCK = 0x66616d6c7931n;

/**
 * Runs `build` while holding the cluster's first-build lock, so that nodes started together on an
 * empty shared volume build one snapshot between them: the others wait, then find it (`build`
 * checks again), however long that build takes. Session-level: a builder that dies releases it.
 * Null when PostgreSQL cannot be reached: the caller builds without it (a node alone finds nothing
 * to race).
 */
export async function withFirstBuildLock<T>(s: DatabaseSettings, build: () => Promise<T>): Promise<{ readonly value: T } | null> {
  // The wait lasts as long as the other node's build, which the statement timeout (and the
  // client's query timeout beside it) is not sized for: a day instead.
  const client = openClient({ ...s, statementTimeoutMs: 24 * 3_600_000 }, 'family-events first snapshot');
  try {
    await client.connect();
    await client.query({ text: 'SELECT pg_advisory_lock($1)', values: [FIRST_BUILD_LOCK.toString()] });
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
  try {
    return { value: await build() };
  } finally {
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes `snapshotId` the one every node serves: recorded in the shared ledger and announced, after
 * the builder has published it to the shared snapshot directory. `onlyIfNone`: unless the ledger
 * names one already (the first snapshot of a new cluster).
 */
export async function recordSnapshot(s: DatabaseSettings, snapshotId: string, o: { onlyIfNone?: boolean } = {}): Promise<void> {
  await migrate(s);
  const client = openClient(s, 'family-events snapshot');
  await client.connect();
  try {
    await client.query('BEGIN');
    const set = await client.query(pgQuery(o.onlyIfNone ? 'current_snapshot_first' : 'current_snapshot_set', { snapshot_id: snapshotId }));
    if (!o.onlyIfNone || set.rowCount === 1) await announce(client, 'snapshot');
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
}
