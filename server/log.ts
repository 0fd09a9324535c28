// Structured logs with pino: one JSON line per request (route, status, bytes, duration, cache),
// written asynchronously so logging never blocks the event loop. Request values that may carry a
// key (the query string, Authorization, Cookie) are never passed to the logger; since an error's
// message or a logged path could still hold one (a URL with api_key= or a sign-in link's token=),
// every line is also scrubbed on its way out: keys, tokens in query strings, bearer credentials and
// the website's cookies become "…", and fields named for a secret are redacted whatever they hold.
import { pino, type LoggerOptions, type Logger } from 'pino';

export type { Logger };

/** At low traffic a line waits at most this long in the write batch before it reaches the output. */
const FLUSH_EVERY_MS = 500;

export interface Logging {
  readonly logger: Logger;
  /** Writes what is batched now, synchronously: start-up's "listening on" line is seen at once. */
  readonly flush: () => void;
  /** The last flush, at shutdown. */
  readonly close: () => void;
  /**
   * Where already formatted lines go (server/access.ts's access lines, one write a turn), or null
   * when the level leaves out `info`. The same destination as the logger's, so the lines share its batching.
   */
  readonly infoLines: ((lines: string) => void) | null;
}

/**
 * A key (core/keys.ts), a secret in a query string or form (api_key=, token=, key=), a
 * bearer credential, and the website's cookies (server/web/session.ts, with or without __Host-).
 */
const SECRET =
  /bsc_live_[0-9a-z]+|(?<![\w-])((?:api_key|token|key|secret|password)=)[^&#\s"';,]+|((?:Bearer|Basic)\s+)[^\s"',;]+|((?:__Host-)?fe_(?:session|pre|oidc)=)[^;\s"',]+/gi;

const MAY_HOLD_SECRET = /[=_\s]/;

/** `s` with every secret replaced by "…" (its name kept, so the line still says what was there). */
export function scrubSecrets(s: string): string {
  // Each of them holds one of these characters; most logged strings (routes, methods) hold none.
  if (!MAY_HOLD_SECRET.test(s)) return s;
  return s.replace(SECRET, (_m, query?: string, scheme?: string, cookie?: string) => `${query ?? scheme ?? cookie ?? 'bsc_live_'}…`);
}

/**
 * Fields whose value is a secret whatever it looks like, at any depth. (Checked here rather than
 * with pino's `redact`, whose wildcard paths cost 4-5 µs on every line, four times the line itself.)
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'set-cookie', 'token', 'api_key', 'key', 'password', 'secret']);
const REDACTED = '[redacted]';

/** A logged value with secrets scrubbed from its strings; the same object when there was nothing to scrub (the common case). */
function scrubbed(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return scrubSecrets(v);
  if (v === null || typeof v !== 'object' || depth > 4) return v;
  if (v instanceof Error) return { type: v.name, message: scrubSecrets(v.message), stack: v.stack === undefined ? undefined : scrubSecrets(v.stack) };
  if (Array.isArray(v)) {
    const out = v.map((x) => scrubbed(x, depth + 1));
    return out.some((x, i) => x !== v[i]) ? out : v;
  }
  const o = v as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const x = o[k];
    const y = x !== undefined && SECRET_FIELDS.has(k.toLowerCase()) ? REDACTED : scrubbed(x, depth + 1);
    if (y !== x) (copy ??= { ...o })[k] = y;
  }
  return copy ?? v;
}

const OPTIONS = (level: string): LoggerOptions => ({
  level,
  base: null,
  hooks: {
    logMethod(args, method) {
      method.apply(this, args.map((a) => scrubbed(a)) as Parameters<typeof method>);
    },
  },
});

export function createLogger(level: string, stream?: NodeJS.WritableStream): Logging {
  if (stream) {
    const logger = pino(OPTIONS(level), stream);
    return { logger, flush: () => undefined, close: () => undefined, infoLines: logger.isLevelEnabled('info') ? (s) => void stream.write(s) : null };
  }
  // Lines are batched into writes of 64 KiB or more (up to 256 KiB) so a busy server, which logs
  // ~8 MB/s of access lines, makes few writes: each is a hand-off to libuv's threads, dear on this
  // VM (4 KiB batches: 304 polls 5-9% slower). A quiet server would keep lines in the batch
  // indefinitely, so the batch is also written on a timer (a no-op write when empty).
  const destination = pino.destination({ dest: 1, sync: false, minLength: 64 * 1024, maxWrite: 256 * 1024 });
  const timer = setInterval(() => destination.flush(), FLUSH_EVERY_MS);
  timer.unref();
  const logger = pino(OPTIONS(level), destination);
  return {
    logger,
    infoLines: logger.isLevelEnabled('info') ? (s) => void destination.write(s) : null,
    flush: () => destination.flushSync(),
    close: () => {
      clearInterval(timer);
      destination.flushSync();
    },
  };
}
