// The benchmark's conventional-Node-stack peer: Fastify 5 + pg 8 serving GET /v1/events from the
// PostGIS events table bench/postgis.ts loads, each answer one JSON document built by PostgreSQL
// with the query every PostGIS peer shares, bench/postgis/search.sql.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';
import { weekRange } from '../../server/query.ts';
import { CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { fold, words } from '../../core/text.ts';

// Usage: node --import tsx bench/peers/fastify-pg.ts PORT, with env PGHOST PGPORT PGUSER PGPASSWORD
// PGDATABASE (read by pg itself), PG_SCHEMA (the dataset's schema, e.g. sample), WEB_BASE_URL,
// NOW_MS (the bench's fixed now), PG_POOL_SIZE (default 4), optional PGOPTIONS (session settings).
// Prints "listening PORT" once a first query has succeeded; exits 1 with one line if it cannot.
const env = process.env;
const port = Number(process.argv[2]);
const schema = env.PG_SCHEMA ?? 'sample';
const web = env.WEB_BASE_URL ?? 'https://familyevents.example';
const nowMs = env.NOW_MS ?? String(Date.now());
const poolSize = Number(env.PG_POOL_SIZE ?? '4');

function fail(message: string): never {
  console.error(`fastify-pg: ${message}`);
  process.exit(1);
}
if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`PORT must be 1-65535 (got ${process.argv[2] ?? 'nothing'})`);
if (!/^[a-z_]\w*$/.test(schema)) fail(`PG_SCHEMA must be a plain identifier (got ${schema})`);
if (!/^\d{1,15}$/.test(nowMs)) fail(`NOW_MS must be epoch milliseconds (got ${nowMs})`);
if (!Number.isInteger(poolSize) || poolSize < 1) fail(`PG_POOL_SIZE must be a whole number >= 1 (got ${env.PG_POOL_SIZE})`);

/** The bench key's plan excludes these, as bench/lib/dataset.ts EXCLUDED_CATEGORIES (not imported: it loads DuckDB). */
const EXCLUDED = ['festivals', 'seasonal'];
const ALLOWED = CATEGORY_SLUGS.filter((c) => !EXCLUDED.includes(c));
const MAX_AGE_YEARS = 18;
const DEFAULT_RADIUS_KM = 10;
/** search.sql's page size is written into it, so it is the only limit this peer can answer. */
const PAGE = 20;
const FOREVER_MS = String(Number.MAX_SAFE_INTEGER);

/** search.sql's variables, in the order bench/mix.ts MixRow documents them. */
const VARIABLES = [
  'from_ms',
  'to_ms',
  'has_geo',
  'lat',
  'lng',
  'radius',
  'city_key',
  'word',
  'has_ages',
  'age_lo',
  'age_hi',
  'cat',
  'excluded',
  'off',
  'web',
] as const;
type Variable = (typeof VARIABLES)[number];
const isVariable = (name: string): name is Variable => (VARIABLES as readonly string[]).includes(name);

/**
 * search.sql as one $n statement: its (:name) variables are psql's spelling; the extended protocol
 * wants positions, one per name (a name used twice is bound once). Comment lines go so that a
 * "(:name)" quoted in the header is neither bound nor sent on every Parse.
 */
function loadSearch(): { text: string; names: Variable[] } {
  const file = new URL('../postgis/search.sql', import.meta.url);
  let sql: string;
  try {
    sql = readFileSync(file, 'utf8');
  } catch (err) {
    fail(`cannot read ${file.pathname}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const names: Variable[] = [];
  const text = sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .trim()
    .replace(/\(:([a-z_]+)\)/g, (_m, name: string) => {
      if (!isVariable(name)) fail(`${file.pathname} uses the variable :${name}, which this peer does not bind`);
      const at = names.indexOf(name);
      return `($${at < 0 ? names.push(name) : at + 1})`;
    });
  return { text, names };
}
const search = loadSearch();

/**
 * The ISO weeks of the fixed now, as our server computes them (Monday 00:00 to the next Monday
 * less 1 ms, Los Angeles time); city and q are folded by the snapshot's own fold and words, so
 * both systems are asked exactly the same search.
 */
const week = (kind: 'current' | 'next'): { from: string; to: string } => {
  const r = weekRange({ kind }, new Date(Number(nowMs)));
  return { from: String(r.fromMs), to: String(r.toMs) };
};
const WEEKS = { current: week('current'), next: week('next') };

interface Query {
  lat?: number;
  lng?: number;
  radius_km?: number;
  city?: string;
  q?: string;
  age_min?: number;
  age_max?: number;
  category?: string;
  week?: 'current' | 'next';
  limit?: number;
  offset: number;
}

const querystring = {
  type: 'object',
  additionalProperties: false,
  properties: {
    lat: { type: 'number', minimum: -90, maximum: 90 },
    lng: { type: 'number', minimum: -180, maximum: 180 },
    radius_km: { type: 'number', exclusiveMinimum: 0, maximum: 500 },
    city: { type: 'string', minLength: 1, maxLength: 200 },
    q: { type: 'string', minLength: 1, maxLength: 200 },
    age_min: { type: 'integer', minimum: 0, maximum: MAX_AGE_YEARS },
    age_max: { type: 'integer', minimum: 0, maximum: MAX_AGE_YEARS },
    // One slug; asking for an excluded category is a 400 as on our server (a 403 there).
    category: { type: 'string', enum: ALLOWED },
    week: { type: 'string', enum: ['current', 'next'] },
    limit: { type: 'integer' },
    offset: { type: 'integer', minimum: 0, maximum: 100_000, default: 0 },
  },
  dependencies: { lat: ['lng'], lng: ['lat'], radius_km: ['lat'] },
} as const;

class Refused extends Error {}

/** The request's values for search.sql, by name: '' and 0 where a filter is not asked for (the header's convention). */
function bindings(q: Query): Record<Variable, string | number> {
  if (q.limit !== undefined && q.limit !== PAGE) throw new Refused(`querystring/limit must be ${PAGE}: this peer's shared query (search.sql) pages by ${PAGE}`);
  if (q.age_min !== undefined && q.age_max !== undefined && q.age_max < q.age_min) throw new Refused('querystring/age_max must not be less than age_min');
  let word = '';
  if (q.q !== undefined) {
    const ws = words(q.q);
    if (ws.length === 0) throw new Refused('querystring/q must contain at least one letter or digit');
    if (ws.length > 1) throw new Refused(`querystring/q has ${ws.length} words: this peer supports one word`);
    word = ws[0] ?? '';
  }
  const geo = q.lat !== undefined && q.lng !== undefined;
  const ages = q.age_min !== undefined || q.age_max !== undefined;
  const range = q.week ? WEEKS[q.week] : { from: nowMs, to: FOREVER_MS };
  return {
    from_ms: range.from,
    to_ms: range.to,
    has_geo: geo ? 1 : 0,
    lat: geo ? (q.lat ?? 0) : 0,
    lng: geo ? (q.lng ?? 0) : 0,
    radius: geo ? (q.radius_km ?? DEFAULT_RADIUS_KM) : 0,
    city_key: q.city === undefined ? '' : fold(q.city),
    word,
    has_ages: ages ? 1 : 0,
    // Events without an age range are for all ages (search.sql); age_max covers its whole year.
    age_lo: (q.age_min ?? 0) * 12,
    age_hi: (q.age_max ?? MAX_AGE_YEARS) * 12 + 11,
    cat: q.category ?? '',
    excluded: EXCLUDED.join(','),
    off: q.offset,
    web,
  };
}

/** One named statement: prepared once per connection, planned per execution (plan_cache_mode below). */
function statement(values: Record<Variable, string | number>): pg.QueryArrayConfig {
  return { name: 'search', text: search.text, values: search.names.map((n) => values[n]), rowMode: 'array' };
}

// The document goes out as PostgreSQL wrote it: search.sql answers a json column, which pg would
// JSON.parse only for Fastify to serialize again, so this pool's json parser is the identity.
const types = new pg.TypeOverrides();
types.setTypeParser(114, (v: string) => v);

const pool = new pg.Pool({
  max: poolSize,
  types,
  // The dataset's schema first, PostGIS (public) after, as the pgbench runs set it. Custom plans:
  // search.sql writes unused filters as "flag = 0 OR …", which only a custom plan folds away; the
  // generic plan a named statement may switch to after 5 runs keeps every branch and can use none
  // of the indexes (see search.sql's header). PGOPTIONS (which pg would otherwise read) comes
  // last, so a run can still override either.
  options: [`-c search_path=${schema},public -c plan_cache_mode=force_custom_plan`, env.PGOPTIONS ?? ''].join(' ').trim(),
  connectionTimeoutMillis: 5000,
});
// An idle connection can fail (server restart); the pool replaces it, the process must not die of it.
pool.on('error', (err) => console.error(`fastify-pg: idle connection: ${err.message}`));

// Off, where a production deployment would run at warn: on the success path warn logs nothing, so
// off measures the same work without the logger's per-request child and serializer setup.
const app = Fastify({
  logger: false,
  // Fastify's default strips unknown properties; the contract rejects them.
  ajv: { customOptions: { removeAdditional: false } },
});

app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok\n'));

app.get<{ Querystring: Query }>('/v1/events', { schema: { querystring } }, async (req, reply) => {
  let values: Record<Variable, string | number>;
  try {
    values = bindings(req.query);
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: err.message });
  }
  const r = await pool.query<[string]>(statement(values));
  return reply.type('application/json').send(r.rows[0]?.[0]);
});

/** One line: a refused connection to a name with several addresses is an AggregateError with no message of its own. */
function describe(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(describe).join('; ');
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}

try {
  // A first query before listening: the events table and event_json must be there for this role.
  await pool.query('SELECT $1::regprocedure, count(*) FROM (SELECT 1 FROM events LIMIT 1) one', ['event_json(events, text, double precision)']);
  // And search.sql must parse, plan and bind as converted; a city_key no fold produces keeps it to one index probe.
  await pool.query(statement({ ...bindings({ offset: 0 }), city_key: ' ' }));
} catch (err) {
  const where = `${env.PGUSER ?? '(user)'}@${env.PGHOST ?? '(socket)'}:${env.PGPORT ?? '5432'}/${env.PGDATABASE ?? '(database)'} schema ${schema}`;
  fail(`PostgreSQL unusable at ${where}: ${describe(err)}`);
}
await app.listen({ port, host: '127.0.0.1' });
console.log(`listening ${port}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0));
  });
}
