// The website's tests run on the bundled sample plus one hostile upstream (test/fixtures/web/
// hostile.ics): quotes, ampersands, tags and </script> in its title, description and organizer,
// a javascript: URL, and a canceled event. The organizer name comes from the registry entry, which
// is how an organizer's name reaches records verbatim (titles and descriptions lose their tags in
// the pipeline; the organizer is the field that keeps its angle brackets as text).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../../core/config.ts';
import { buildSnapshot, type BuildResult } from '../../../snapshot/build/build.ts';
import { readRows, NOW, type Fixture } from '../helpers.ts';

export const HOSTILE_ORGANIZER = 'Hostile "Upstream" </script><script>alert("x")</script> & <Library>';
export const HOSTILE_SOURCE = {
  id: 'hostile-upstream',
  url: path.join(REPO_ROOT, 'test', 'fixtures', 'web', 'hostile.ics'),
  format: 'ical',
  organizer: { name: HOSTILE_ORGANIZER, url: 'https://hostile.example.org' },
  destination: 'east-bay',
  attribution: 'Hostile Upstream',
  free_by_default: true,
};

export interface WebFixture extends Fixture {
  /** The registry the snapshot was built from (sample + hostile). */
  readonly registryFile: string;
  /** Builds the next snapshot without the hostile source (its events become gone) and returns it. */
  rebuildWithoutHostile(now?: Date): Promise<BuildResult>;
}

export async function webFixture(now: Date = NOW): Promise<WebFixture> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fe-web-'));
  const dataDir = path.join(dir, 'data');
  const sample = JSON.parse(await readFile(path.join(REPO_ROOT, 'sources', 'registry.json'), 'utf8')) as { sources: unknown[] };
  const registryFile = path.join(dir, 'registry.json');
  await writeFile(registryFile, JSON.stringify({ sources: [...sample.sources, HOSTILE_SOURCE] }));
  const withoutFile = path.join(dir, 'registry-without-hostile.json');
  await writeFile(withoutFile, JSON.stringify({ sources: sample.sources }));
  const build = await buildSnapshot({ dataDir, registryFile, now });
  return {
    dataDir,
    build,
    registryFile,
    rows: await readRows(path.join(build.dir, 'events.parquet')),
    rebuildWithoutHostile: (at = new Date(now.getTime() + 3_600_000)) => buildSnapshot({ dataDir, registryFile: withoutFile, now: at }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
