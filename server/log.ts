// Structured logs with pino: one JSON line per request (route, status, bytes, duration, cache),
// written asynchronously so logging never blocks the event loop. Request values that may carry a
// key (the query string, Authorization) are never passed to the logger.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): { logger: Logger; flush: () => void } {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const logger = pino({ level, base: null }, destination);
  return { logger, flush: () => destination.flushSync() };
}
