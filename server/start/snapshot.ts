// What the server serves at start-up: the current snapshot, or one built first. Policy only; how a
// snapshot is built (the builder, its progress bar) is the caller's.
import type { Config } from '../../core/config.ts';
import type { Manifest } from '../../snapshot/store.ts';

/**
 * The current snapshot's manifest, building the configured sources first (`build`, the CLI's
 * builder with its progress bar) if there is none or this version cannot serve it. With
 * DATABASE_URL, nodes started together on an empty shared volume take turns (withFirstBuildLock):
 * one builds, the others find its snapshot.
 */
export async function ensureSnapshot(cfg: Config, build: () => Promise<Manifest>): Promise<Manifest> {
  const { currentSnapshotId, readManifest, SNAPSHOT_SCHEMA_VERSION } = await import('../../snapshot/store.ts');
  const current = async (): Promise<Manifest | null> => {
    const id = await currentSnapshotId(cfg.dataDir);
    return id ? readManifest(cfg.dataDir, id) : null;
  };
  /** `found` if this version serves it, else a build of the configured sources. */
  const servedOrBuilt = async (found: Manifest | null): Promise<Manifest> => {
    if (found?.schema_version === SNAPSHOT_SCHEMA_VERSION) return found;
    process.stderr.write(
      found
        ? `family-events: snapshot ${found.id} has layout ${found.schema_version}, this version serves ${SNAPSHOT_SCHEMA_VERSION}; rebuilding from ${cfg.sourcesFile}…\n`
        : `family-events: no snapshot under ${cfg.dataDir}; building one from ${cfg.sourcesFile}…\n`,
    );
    return build();
  };
  const found = await current();
  // A snapshot to serve already (every start but the first): no lock to take.
  if (found?.schema_version === SNAPSHOT_SCHEMA_VERSION || !cfg.database) return servedOrBuilt(found);
  const { recordSnapshot, withFirstBuildLock } = await import('../../ledger/postgres/cluster.ts');
  const database = cfg.database;
  const built = await withFirstBuildLock(database, async () => {
    // Looked at again under the lock: another node may have built it meanwhile.
    const manifest = await servedOrBuilt(await current());
    // A new cluster's first snapshot is the one its ledger names, as a later `snapshot build` is.
    // Not recorded (PostgreSQL went away meanwhile): the nodes serve the volume's `current`, the same one.
    await recordSnapshot(database, manifest.id, { onlyIfNone: true }).catch((err: unknown) =>
      process.stderr.write(
        `family-events: snapshot ${manifest.id} is not recorded in the shared ledger (${(err as Error).message}); \`family-events snapshot publish\` records it\n`,
      ),
    );
    return manifest;
  });
  return built ? built.value : servedOrBuilt(await current());
}
