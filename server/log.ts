// Structured logs with pino: one JSON line per request (route, status, bytes, duration, cache),
// written asynchronously so logging never blocks the event loop. Request values that may carry a
// key (the query string, Authorization) are never passed to the logger.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, stream?: NodeJS.WritableStream): { logger: Logger; flush: () => void } {
  if (stream) return { logger: pino({ level, base: null }, stream), flush: () => undefined };
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  return { logger: pino({ level, base: null }, destination), flush: () => destination.flushSync() };
}
