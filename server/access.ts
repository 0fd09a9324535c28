// What each finished request leaves behind: its access-log line and its two request metrics
// (http_requests_total, http_request_duration_seconds). Both are kept off the request's path:
// a request adds one small record, and once per turn of the event loop the turn's records become
// one write of log lines and one pass of metric updates. The line is pino's, byte for byte (same
// fields, same order: level, time, the fields, msg), formatted here because pino's per-call work
// (its hooks, serializers and a write per line) was a sixth of a cached answer's main-thread time.
// Nothing is dropped: `flush` writes what is pending (before /metrics is read, and at shutdown).
import type { Metrics } from './metrics.ts';
import { scrubSecrets } from './log.ts';

export interface AccessRecord {
  readonly method: string;
  /** The route template (never the path as sent, nor its query string: either may carry a key). */
  readonly route: string;
  readonly status: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly cache: 'hit' | 'miss' | null;
  readonly aborted: boolean;
}

/** pino's number for `info`, the level of every access line. */
const INFO = 30;

export class AccessLog {
  private lines = '';
  private pending: AccessRecord[] = [];
  private scheduled = false;
  /** `"method":…,"route":…,` per method and route seen: the same few pairs all day. */
  private readonly prefixes = new Map<string, string>();

  /**
   * @param write where a turn's lines go (the logger's destination), or null when the log level
   *   leaves out `info` (metrics are still counted).
   */
  private readonly write: ((lines: string) => void) | null;
  private readonly metrics: Metrics;
  constructor(write: ((lines: string) => void) | null, metrics: Metrics) {
    this.write = write;
    this.metrics = metrics;
  }

  add(r: AccessRecord): void {
    this.pending.push(r);
    if (this.write !== null) this.lines += this.line(r);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes the pending lines and counts the pending metrics now. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length > 0) {
      const done = this.pending;
      this.pending = [];
      this.metrics.observeMany(done);
    }
    if (this.lines !== '') {
      const lines = this.lines;
      this.lines = '';
      this.write?.(lines);
    }
  }

  private line(r: AccessRecord): string {
    const pair = `${r.method} ${r.route}`;
    let prefix = this.prefixes.get(pair);
    if (prefix === undefined) {
      // Scrubbed like every other line (server/log.ts): a route is a template, but nothing here relies on it.
      prefix = `"method":${JSON.stringify(scrubSecrets(r.method))},"route":${JSON.stringify(scrubSecrets(r.route))},`;
      // Methods are whatever clients send: the map stays small whatever they send.
      if (this.prefixes.size < 1024) this.prefixes.set(pair, prefix);
    }
    const ms = Math.round(r.seconds * 1e4) / 10;
    const cache = r.cache === null ? 'null' : `"${r.cache}"`;
    const aborted = r.aborted ? ',"aborted":true' : '';
    return `{"level":${INFO},"time":${Date.now()},${prefix}"status":${r.status},"bytes":${r.bytes},"ms":${ms},"cache":${cache}${aborted},"msg":"request"}\n`;
  }
}
