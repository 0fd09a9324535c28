// Structured logs with pino: one JSON line per request (route, status, bytes, duration, cache),
// written asynchronously so logging never blocks the event loop. Request values that may carry a
// key (the query string, Authorization) are never passed to the logger.
import { pino, type Logger } from 'pino';

export type { Logger };

/** At low traffic a line waits at most this long in the write batch before it reaches the output. */
const FLUSH_EVERY_MS = 500;

export interface Logging {
  readonly logger: Logger;
  /** Writes what is batched now, synchronously: start-up's "listening on" line is seen at once. */
  readonly flush: () => void;
  /** The last flush, at shutdown. */
  readonly close: () => void;
}

export function createLogger(level: string, stream?: NodeJS.WritableStream): Logging {
  if (stream) return { logger: pino({ level, base: null }, stream), flush: () => undefined, close: () => undefined };
  // Lines are batched into 4 KiB writes so a busy server makes few syscalls; a quiet one would keep
  // them in the batch indefinitely, so the batch is also written on a timer (a no-op write when empty).
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => destination.flush(), FLUSH_EVERY_MS);
  timer.unref();
  return {
    logger: pino({ level, base: null }, destination),
    flush: () => destination.flushSync(),
    close: () => {
      clearInterval(timer);
      destination.flushSync();
    },
  };
}
