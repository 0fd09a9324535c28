// Per-client-address token buckets for the keyless demo: `perMinute` calls a minute, refilled
// continuously, so a steady poller is never locked out for long and a burst is cut at the limit.
export interface Verdict {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until one more call is allowed (0 when allowed now). */
  readonly retryAfterS: number;
  /** Seconds until the bucket is full again. */
  readonly resetS: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly perMinute: number) {
    this.perMs = perMinute / 60_000;
    // Full buckets carry no state worth keeping: drop them so the map tracks only recent callers.
    this.sweeper = setInterval(() => this.sweep(performance.now()), 60_000);
    this.sweeper.unref();
  }

  take(address: string, nowMs = performance.now()): Verdict {
    const b = this.buckets.get(address) ?? { tokens: this.perMinute, at: nowMs };
    b.tokens = Math.min(this.perMinute, b.tokens + (nowMs - b.at) * this.perMs);
    b.at = nowMs;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(address, b);
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.floor(b.tokens),
      retryAfterS: allowed ? 0 : Math.ceil((1 - b.tokens) / this.perMs / 1000),
      resetS: Math.ceil((this.perMinute - b.tokens) / this.perMs / 1000),
    };
  }

  private sweep(nowMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (nowMs - b.at) * this.perMs >= this.perMinute) this.buckets.delete(k);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
