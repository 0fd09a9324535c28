// Which snapshot the server answers from. Watches DATA_DIR/snapshots/current (directory events,
// plus a poll, since a rename over a symlink is not reported on every filesystem); on a switch it
// has every worker load the new snapshot first, then moves new requests to it in one assignment.
// A request resolves the snapshot once, when it is validated, and carries that reference to the
// worker: no request ever mixes two snapshots, and requests in flight finish on the old one.
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { currentSnapshotId, readManifest, SNAPSHOT_SCHEMA_VERSION, snapshotsDir, type Manifest } from '../snapshot/store.ts';
import type { SnapshotRef } from '../query/protocol.ts';
import { ApiError } from './errors.ts';
import type { Logger } from './log.ts';
import type { QueryPool } from './pool.ts';
import { fold } from '../core/text.ts';

export interface LoadedSnapshot {
  readonly ref: SnapshotRef;
  readonly manifest: Manifest;
  /** Folded name → published name: what the city filter accepts. */
  readonly cities: ReadonlyMap<string, string>;
}

/** How long workers get to load a new snapshot before requests move to it regardless. */
const PREPARE_TIMEOUT_MS = 120_000;
/** How often a snapshot that could not be loaded is tried again. */
const RETRY_FAILED_MS = 10_000;

export class Snapshots {
  private loaded: LoadedSnapshot | null = null;
  private watcher: FSWatcher | null = null;
  private poller: NodeJS.Timeout | null = null;
  private checking: Promise<void> = Promise.resolve();
  private recheck = false;
  /** With a shared ledger: the snapshot it names (null until it has named one: follow `current`). */
  private named: string | null = null;
  /** The snapshot last asked for that could not be loaded, why (public: /readyz), and when. */
  private failure: { readonly id: string; readonly reason: string; readonly atMs: number } | null = null;

  private readonly dataDir: string;
  private readonly pool: QueryPool;
  private readonly log: Logger;
  private readonly pollMs: number;
  /** Runs after each switch (the response cache drops the old snapshot's entries). */
  private readonly onSwitch: (snapshotId: string) => void;
  constructor(dataDir: string, pool: QueryPool, log: Logger, pollMs: number, onSwitch: (snapshotId: string) => void = () => undefined) {
    this.dataDir = dataDir;
    this.pool = pool;
    this.log = log;
    this.pollMs = pollMs;
    this.onSwitch = onSwitch;
  }

  get current(): LoadedSnapshot | null {
    return this.loaded;
  }

  /** The snapshot to answer from, or the 503 every route gives before the first one is loaded. */
  require(): LoadedSnapshot {
    if (this.loaded) return this.loaded;
    throw new ApiError('unavailable', 'No event snapshot is loaded yet; retry in a few seconds.', undefined, [['Retry-After', '5']]);
  }

  /** Loads the current snapshot (if any) and starts watching for switches. */
  async start(): Promise<void> {
    const dir = snapshotsDir(this.dataDir);
    await mkdir(dir, { recursive: true });
    await this.check();
    this.watcher = watch(dir, () => this.schedule());
    this.watcher.on('error', (err) => this.log.warn({ err: err.message }, 'snapshot directory watch failed; polling only'));
    this.poller = setInterval(() => this.schedule(), this.pollMs);
    this.poller.unref();
  }

  /**
   * Several nodes: the shared ledger names the snapshot to serve (every node the same), and from
   * then on that name, not this machine's `current` link, decides.
   */
  follow(id: string): void {
    this.named = id;
    this.schedule();
  }

  /** A snapshot this node was asked to serve and could not load, while it serves the previous one. */
  get pending(): { readonly id: string; readonly reason: string } | null {
    return this.failure && { id: this.failure.id, reason: this.failure.reason };
  }

  /** Checks now, and once more after a check in progress (events can arrive mid-check). */
  private schedule(): void {
    if (this.recheck) return;
    this.recheck = true;
    this.checking = this.checking.then(() => {
      this.recheck = false;
      return this.check();
    });
  }

  /** Resolves when any pending switch has been processed (tests, and start-up). */
  async settled(): Promise<void> {
    await this.checking;
  }

  private async check(): Promise<void> {
    let id: string | null;
    try {
      id = this.named ?? (await currentSnapshotId(this.dataDir));
    } catch {
      return;
    }
    if (id === null || id === this.loaded?.ref.id) {
      if (id !== null) this.failure = null;
      return;
    }
    // A snapshot that failed is tried again now and then (a shared volume may have been slow), not on every poll.
    if (this.failure?.id === id && Date.now() - this.failure.atMs < RETRY_FAILED_MS) return;
    let manifest: Manifest;
    try {
      manifest = await readManifest(this.dataDir, id);
    } catch (err) {
      this.failed(id, 'its manifest cannot be read from the snapshot directory (see the log)');
      this.log.warn({ snapshot: id, err: (err as Error).message }, 'snapshot manifest unreadable; staying on the current snapshot');
      return;
    }
    if (manifest.schema_version !== SNAPSHOT_SCHEMA_VERSION) {
      this.failed(id, `layout ${manifest.schema_version}, this server reads ${SNAPSHOT_SCHEMA_VERSION}`);
      this.log.error(
        { snapshot: id, layout: manifest.schema_version, wanted: SNAPSHOT_SCHEMA_VERSION },
        'snapshot has another layout; rebuild it with `family-events snapshot build`',
      );
      return;
    }
    const ref: SnapshotRef = { id, dir: path.join(snapshotsDir(this.dataDir), id) };
    const t0 = performance.now();
    const { ready, errors } = await this.pool.prepare(ref, PREPARE_TIMEOUT_MS);
    if (errors.length) {
      this.failed(id, 'the query workers could not load it (see the log)');
      this.log.error({ snapshot: id, errors }, 'workers could not load the snapshot; staying on the current snapshot');
      return;
    }
    this.failure = null;
    const previous = this.loaded?.ref.id ?? null;
    this.loaded = { ref, manifest, cities: new Map(manifest.cities.map((c) => [fold(c), c])) };
    this.onSwitch(id);
    this.log.info(
      { snapshot: id, previous, events: manifest.counts.events, workers_ready: ready, load_ms: Math.round(performance.now() - t0) },
      'serving snapshot',
    );
  }

  /** `reason` is served by /readyz to anyone: what failed, never a path or a worker's error (those are logged). */
  private failed(id: string, reason: string): void {
    this.failure = { id, reason, atMs: Date.now() };
  }

  stop(): void {
    this.watcher?.close();
    if (this.poller) clearInterval(this.poller);
  }
}
