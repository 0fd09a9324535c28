// The only place that reads process.env. Parsed once at boot, frozen, passed down.
// A bad value stops start-up with one line naming the variable (see ConfigError).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as v from 'valibot';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const port = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.regex(/^\d{1,5}$/, 'must be a whole number from 0 to 65535'),
    v.transform(Number),
    v.maxValue(65535, 'must be a whole number from 0 to 65535'),
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
  WEB_BASE_URL: v.optional(baseUrl(), 'https://familyevents.example'),
  FAMILY_EVENTS_NOW: v.optional(
    v.pipe(
      v.string(),
      v.isoTimestamp('must be an ISO 8601 instant with offset, e.g. 2026-11-21T09:00:00-08:00'),
      v.transform((s) => new Date(s)),
    ),
  ),
  SOURCES_FILE: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Absolute. Everything the program writes lives below it. */
  readonly dataDir: string;
  readonly publicBaseUrl: string;
  readonly webBaseUrl: string;
  /** Absolute path of the source registry. Defaults to the bundled sample registry. */
  readonly sourcesFile: string;
  readonly logLevel: string;
  /** The clock. Pinned by FAMILY_EVENTS_NOW for tests and reproducible demos. */
  readonly now: () => Date;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
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
  const pinned = e.FAMILY_EVENTS_NOW;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(cwd, e.DATA_DIR),
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`,
    webBaseUrl: e.WEB_BASE_URL,
    sourcesFile: e.SOURCES_FILE ? path.resolve(cwd, e.SOURCES_FILE) : path.join(REPO_ROOT, 'sources', 'registry.json'),
    logLevel: e.LOG_LEVEL,
    now: pinned ? () => new Date(pinned.getTime()) : () => new Date(),
  });
}
