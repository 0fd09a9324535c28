// Token buckets, refilled continuously, so a steady caller is never locked out for long and a burst
// is cut at the limit. One instance per kind of caller: client addresses on the keyless demo, API
// keys on live routes (each at its plan's rate; a bucket keeps the rate it was last taken at), and
// client addresses' failed key checks (server/auth.ts). Per process: several nodes each keep their own.
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
  perMinute: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  private readonly defaultPerMinute: number;
  constructor(defaultPerMinute: number) {
    this.defaultPerMinute = defaultPerMinute;
    // Full buckets carry no state worth keeping: drop them so the map tracks only recent callers.
    this.sweeper = setInterval(() => this.sweep(performance.now()), 60_000);
    this.sweeper.unref();
  }

  /** Takes one token from `id`'s bucket of `perMinute` calls a minute. */
  take(id: string, perMinute = this.defaultPerMinute, nowMs = performance.now()): Verdict {
    const b = this.buckets.get(id) ?? { tokens: perMinute, at: nowMs, perMinute };
    const perMs = perMinute / 60_000;
    b.perMinute = perMinute;
    b.tokens = Math.min(perMinute, b.tokens + (nowMs - b.at) * perMs);
    b.at = nowMs;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(id, b);
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(b.tokens),
      retryAfterS: allowed ? 0 : Math.ceil((1 - b.tokens) / perMs / 1000),
      resetS: Math.ceil((perMinute - b.tokens) / perMs / 1000),
    };
  }

  /** Where `id`'s bucket stands, without taking from it: `allowed` when a token is there to take. */
  peek(id: string, perMinute = this.defaultPerMinute, nowMs = performance.now()): Verdict {
    const b = this.buckets.get(id);
    const perMs = perMinute / 60_000;
    const tokens = b ? Math.min(perMinute, b.tokens + (nowMs - b.at) * perMs) : perMinute;
    const allowed = tokens >= 1;
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(tokens),
      retryAfterS: allowed ? 0 : Math.ceil((1 - tokens) / perMs / 1000),
      resetS: Math.ceil((perMinute - tokens) / perMs / 1000),
    };
  }

  private sweep(nowMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((nowMs - b.at) * b.perMinute) / 60_000 >= b.perMinute) this.buckets.delete(k);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
