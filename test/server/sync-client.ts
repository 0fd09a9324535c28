// An aggregator's sync client, written as a customer would write one against /v1/changes and
// nothing else of ours: it keeps a copy of the data in a state file (records by id, and the next
// URL), applies each page in order, and saves the state after every page by write-and-rename, so
// a kill at any moment leaves the copy at a page boundary and a restart goes on from its cursor.
// It stops when a page says has_more is false (a real client would then poll that next URL).
// The next URLs name the server's public base URL; a test server listens on loopback, so the
// client asks `--base` for the same path and query.
// Usage: node --import ./test/tsx.js test/server/sync-client.ts --base URL --key KEY --state FILE
//          [--query 'city=Berkeley'] [--limit 100] [--pause-ms 0]
// Prints one line per page: "page <n> <entries> <records held>".
import { readFile, rename, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    base: { type: 'string' },
    key: { type: 'string' },
    state: { type: 'string' },
    query: { type: 'string', default: '' },
    limit: { type: 'string', default: '100' },
    'pause-ms': { type: 'string', default: '0' },
  },
});
if (!opts.base || !opts.key || !opts.state) throw new Error('--base, --key and --state are required');
const base = opts.base;
const stateFile = opts.state;

interface State {
  /** The next page's path and query; null before the first page. */
  next: string | null;
  records: Record<string, { readonly id: string }>;
}

async function load(): Promise<State> {
  try {
    return JSON.parse(await readFile(stateFile, 'utf8')) as State;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { next: null, records: {} };
    throw err;
  }
}

async function save(state: State): Promise<void> {
  const tmp = `${stateFile}.tmp`;
  await writeFile(tmp, JSON.stringify(state));
  await rename(tmp, stateFile);
}

const state = await load();
const first = new URLSearchParams(opts.query);
first.set('limit', opts.limit);
let pages = 0;
for (;;) {
  const target = state.next ?? `/v1/changes?${first.toString()}`;
  const res = await fetch(`${base}${target}`, { headers: { authorization: `Bearer ${opts.key}` } });
  if (res.status !== 200) throw new Error(`GET ${target} answered ${res.status}: ${await res.text()}`);
  const page = (await res.json()) as {
    changes: ({ id: string; deleted?: true } & Record<string, unknown>)[];
    next: string;
    has_more: boolean;
  };
  for (const item of page.changes) {
    if (item.deleted === true) delete state.records[item.id];
    else state.records[item.id] = item;
  }
  const next = new URL(page.next);
  state.next = `${next.pathname}${next.search}`;
  await save(state);
  pages++;
  process.stdout.write(`page ${pages} ${page.changes.length} ${Object.keys(state.records).length}\n`);
  if (!page.has_more) break;
  await sleep(Number(opts['pause-ms']));
}
