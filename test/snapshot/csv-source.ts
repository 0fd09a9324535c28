// A registry of one CSV source (feed.csv beside it) in a directory: what the tests that rewrite a
// feed between real builds start from (gone events, change times, the change feed).
import fs from 'node:fs/promises';
import path from 'node:path';

/** The Mission branch and a Berkeley farm: two addresses the gazetteer places, in two cities. */
export const MISSION = '"Mission Branch Library, 300 Bartlett St, San Francisco, CA 94110"';
export const FARM = '"Little Farm, Central Park Dr, Berkeley, CA 94708"';

/** Writes `dir`/registry.json naming one CSV source read from `dir`/feed.csv; returns both paths. */
export async function csvSource(dir: string, id: string): Promise<{ readonly registryFile: string; readonly feed: string }> {
  const registryFile = path.join(dir, 'registry.json');
  await fs.writeFile(
    registryFile,
    JSON.stringify({
      sources: [
        {
          id,
          url: 'feed.csv',
          format: 'csv',
          organizer: { name: 'San Francisco Public Library', url: 'https://sfpl.org' },
          destination: 'san-francisco',
          attribution: 'San Francisco Public Library',
          free_by_default: true,
        },
      ],
    }),
  );
  return { registryFile, feed: path.join(dir, 'feed.csv') };
}
