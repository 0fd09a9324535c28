// The only place that reads process.env. Parsed once at boot, frozen, passed down.
// A bad value stops start-up with one line naming the variable (see ConfigError).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';

// The checkout: sql/, sources/, server/web/static/ and package.json are read from it, whether this
// file runs as core/config.ts (tests and scripts, under tsx) or as dist/server/config.js (npm start).
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.js') ? '../..' : '..');

const port = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.regex(/^\d{1,5}$/, 'must be a whole number from 0 to 65535'),
    v.transform(Number),
    v.maxValue(65535, 'must be a whole number from 0 to 65535'),
  );

const wholeNumber = (fallback: string, min: number, max: number) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.regex(/^\d{1,9}$/, `must be a whole number from ${min} to ${max}`),
    v.transform(Number),
    v.minValue(min, `must be a whole number from ${min} to ${max}`),
    v.maxValue(max, `must be a whole number from ${min} to ${max}`),
  );

const flag = (fallback: 'true' | 'false') =>
  v.pipe(
    v.optional(v.picklist(['true', 'false', '1', '0'], 'must be true or false'), fallback),
    v.transform((s) => s === 'true' || s === '1'),
  );

const baseUrl = () =>
  v.pipe(
    v.string(),
    v.url('must be an absolute http(s) URL such as https://api.example.com'),
    v.check((s) => /^https?:\/\//.test(s), 'must start with http:// or https://'),
    v.transform((s) => (s.endsWith('/') ? s.slice(0, -1) : s)),
  );

const EnvSchema = v.object({
  PORT: port('8080'),
  HOST: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), '127.0.0.1'),
  DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), './data'),
  PUBLIC_BASE_URL: v.optional(baseUrl()),
  WEB_BASE_URL: v.optional(baseUrl()),
  FAMILY_EVENTS_NOW: v.optional(
    v.pipe(
      v.string(),
      v.isoTimestamp('must be an ISO 8601 instant with offset, e.g. 2026-11-21T09:00:00-08:00'),
      v.transform((s) => new Date(s)),
    ),
  ),
  LEDGER_DIR: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  DATABASE_URL: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => /^postgres(?:ql)?:\/\//.test(s),
        'must be a postgres:// or postgresql:// URL such as postgresql://family_events@db.internal/family_events',
      ),
    ),
  ),
  PG_POOL_MAX: wholeNumber('4', 1, 100),
  PG_STATEMENT_TIMEOUT_MS: wholeNumber('5000', 100, 600_000),
  LEDGER_HOLD_MS: v.optional(wholeNumber('0', 1000, 3_600_000)),
  NODE_NAME: v.optional(v.pipe(v.string(), v.regex(/^[\w.:-]{1,64}$/, 'must be 1 to 64 letters, digits, dots, colons, dashes or underscores'))),
  SOURCES_FILE: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  ADMIN_PORT: port('9464'),
  ADMIN_HOST: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty')), '127.0.0.1'),
  POOL_THREADS: wholeNumber(String(Math.max(1, os.availableParallelism())), 1, 64),
  POOL_MAX_QUEUE: wholeNumber('256', 1, 100_000),
  QUERY_TIMEOUT_MS: wholeNumber('2000', 10, 600_000),
  CACHE_MAX_MB: wholeNumber('256', 0, 65_536),
  DEMO_RATE_PER_MINUTE: wholeNumber('30', 1, 100_000_000),
  WEB_LISTINGS_PER_MINUTE: wholeNumber('60', 1, 100_000_000),
  WEB_CALENDARS_PER_MINUTE: wholeNumber('10', 1, 100_000_000),
  TRUST_PROXY: flag('false'),
  SNAPSHOT_POLL_MS: wholeNumber('1000', 50, 3_600_000),
  DRAIN_TIMEOUT_MS: wholeNumber('10000', 0, 600_000),
  SMTP_URL: v.optional(
    v.pipe(
      v.string(),
      v.url('must be an smtp:// or smtps:// URL such as smtps://user:pass@smtp.example.com'),
      v.check((s) => /^smtps?:\/\//.test(s), 'must start with smtp:// or smtps://'),
    ),
  ),
  MAIL_FROM: v.optional(
    v.pipe(v.string(), v.minLength(3, 'must be an address such as Family Events <no-reply@example.com>'), v.includes('@', 'must hold an e-mail address')),
  ),
  PLANS_CONTACT: v.optional(
    v.pipe(v.string(), v.trim(), v.email('must be an e-mail address such as partners@example.org'), v.maxLength(254, 'must be at most 254 characters')),
  ),
  OIDC_ISSUER: v.optional(baseUrl()),
  OIDC_CLIENT_ID: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  OIDC_CLIENT_SECRET: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  OIDC_NAME: v.optional(
    v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(40, 'must be at most 40 characters, like Google or Okta')),
  ),
});

export interface DatabaseSettings {
  readonly url: string;
  /** Connections per process, besides the one that listens for changes. */
  readonly poolMax: number;
  /** Every statement is cancelled after this long (a stuck ledger must answer 503, not hang). */
  readonly statementTimeoutMs: number;
}

/** The identity provider the website offers sign-in with, when all three OIDC_* variables are set. */
export interface OidcSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** What the button says: "Sign in with <name>" (OIDC_NAME, by default the issuer's host). */
  readonly name: string;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Absolute. Everything the program writes lives below it. */
  readonly dataDir: string;
  /** Absolute. The accounts store and the usage ledger (default DATA_DIR/ledger): a disk with fast fsync helps. */
  readonly ledgerDir: string;
  /**
   * The shared PostgreSQL ledger (several API nodes), or null: the embedded SQLite ledger in
   * ledgerDir, one node. Never logged: it may hold a password.
   */
  readonly database: DatabaseSettings | null;
  /**
   * How long records set aside for an answer stay reserved on the shared ledger unless charged or
   * released: what a node that dies mid-answer keeps from its organization, at most.
   */
  readonly ledgerHoldMs: number;
  /** This node's name in the shared ledger (its reservations, its logs): NODE_NAME, or host and pid. */
  readonly nodeName: string;
  readonly publicBaseUrl: string;
  readonly webBaseUrl: string;
  /** Absolute path of the source registry. Defaults to the bundled sample registry. */
  readonly sourcesFile: string;
  readonly logLevel: string;
  /** The clock. Pinned by FAMILY_EVENTS_NOW for tests and reproducible demos. */
  readonly now: () => Date;
  /** The /metrics listener: loopback by default, never the public port. */
  readonly adminPort: number;
  readonly adminHost: string;
  /** DuckDB query threads (Piscina workers), and tasks allowed to wait for one before 503. */
  readonly poolThreads: number;
  readonly poolMaxQueue: number;
  /** A query running longer than this is interrupted and answered 503. */
  readonly queryTimeoutMs: number;
  /** Response cache budget in bytes (0 disables the cache). */
  readonly cacheMaxBytes: number;
  /** Keyless demo calls allowed per client address per minute. */
  readonly demoRatePerMinute: number;
  /** Website listing pages (browse, city, category, search) per client address per minute, without a key. */
  readonly webListingsPerMinute: number;
  /** Website calendar downloads of a search (.ics) per client address per minute. */
  readonly webCalendarsPerMinute: number;
  /** Take the client address from the last X-Forwarded-For hop (behind one trusted proxy). */
  readonly trustProxy: boolean;
  /** How often `current` is re-read, besides the directory watch. */
  readonly snapshotPollMs: number;
  /** On SIGTERM: how long in-flight requests may take to finish. */
  readonly drainTimeoutMs: number;
  /** Where sign-in mail goes; null: written to DATA_DIR/outbox as .eml files (development, tests). */
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  /** Where the docs tell an organization to write to move to a plan other than the sign-up plan; null: ask the operator. */
  readonly plansContact: string | null;
  /** Null: no identity provider is configured, and the website offers e-mail sign-in only. */
  readonly oidc: OidcSettings | null;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, reason: string) {
    super(`${variable}: ${reason}`);
    this.variable = variable;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = v.safeParse(EnvSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const variable = issue.path?.[0]?.key;
    throw new ConfigError(typeof variable === 'string' ? variable : 'environment', issue.message);
  }
  const e = parsed.output;
  // A hold must outlive the longest answer computed under it, or a slow answer could not be charged.
  const ledgerHoldMs = e.LEDGER_HOLD_MS ?? e.QUERY_TIMEOUT_MS + 28_000;
  if (ledgerHoldMs < e.QUERY_TIMEOUT_MS + 1000)
    throw new ConfigError(
      'LEDGER_HOLD_MS',
      `must be at least QUERY_TIMEOUT_MS + 1000 (${e.QUERY_TIMEOUT_MS + 1000}): a hold must outlive the answer computed under it`,
    );
  if (e.ADMIN_PORT !== 0 && e.ADMIN_PORT === e.PORT)
    throw new ConfigError('ADMIN_PORT', `must differ from PORT (${e.PORT}): metrics never share the public port`);
  const oidcVars = [e.OIDC_ISSUER, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET];
  if (oidcVars.some((x) => x !== undefined) && oidcVars.some((x) => x === undefined)) {
    const missing = (['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const).find((_, i) => oidcVars[i] === undefined) ?? 'OIDC_ISSUER';
    throw new ConfigError(missing, 'must be set with the other OIDC_* variables (issuer, client id and secret come together)');
  }
  // openid-client refuses a plain-http provider; only one on this machine (development, tests) may be.
  if (e.OIDC_ISSUER?.startsWith('http:') && !['127.0.0.1', 'localhost', '[::1]'].includes(new URL(e.OIDC_ISSUER).hostname)) {
    throw new ConfigError('OIDC_ISSUER', 'must be an https:// URL (plain http only for a provider on this machine: 127.0.0.1, localhost or [::1])');
  }
  const pinned = e.FAMILY_EVENTS_NOW;
  const webBaseUrl = e.WEB_BASE_URL ?? e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(cwd, e.DATA_DIR),
    ledgerDir: e.LEDGER_DIR ? path.resolve(cwd, e.LEDGER_DIR) : path.join(path.resolve(cwd, e.DATA_DIR), 'ledger'),
    database: e.DATABASE_URL ? { url: e.DATABASE_URL, poolMax: e.PG_POOL_MAX, statementTimeoutMs: e.PG_STATEMENT_TIMEOUT_MS } : null,
    ledgerHoldMs,
    nodeName: e.NODE_NAME ?? `${os.hostname()}:${process.pid}`,
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`,
    // One listener serves both hosts: out of the box, every event_url resolves on this server.
    webBaseUrl,
    sourcesFile: e.SOURCES_FILE ? path.resolve(cwd, e.SOURCES_FILE) : path.join(REPO_ROOT, 'sources', 'registry.json'),
    logLevel: e.LOG_LEVEL,
    now: pinned ? () => new Date(pinned.getTime()) : () => new Date(),
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    poolThreads: e.POOL_THREADS,
    poolMaxQueue: e.POOL_MAX_QUEUE,
    queryTimeoutMs: e.QUERY_TIMEOUT_MS,
    cacheMaxBytes: e.CACHE_MAX_MB * 1024 * 1024,
    demoRatePerMinute: e.DEMO_RATE_PER_MINUTE,
    webListingsPerMinute: e.WEB_LISTINGS_PER_MINUTE,
    webCalendarsPerMinute: e.WEB_CALENDARS_PER_MINUTE,
    trustProxy: e.TRUST_PROXY,
    snapshotPollMs: e.SNAPSHOT_POLL_MS,
    drainTimeoutMs: e.DRAIN_TIMEOUT_MS,
    smtpUrl: e.SMTP_URL ?? null,
    mailFrom: e.MAIL_FROM ?? `Family Events <no-reply@${new URL(webBaseUrl).hostname}>`,
    plansContact: e.PLANS_CONTACT ?? null,
    oidc:
      e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET
        ? { issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID, clientSecret: e.OIDC_CLIENT_SECRET, name: e.OIDC_NAME ?? new URL(e.OIDC_ISSUER).host }
        : null,
  });
}
