// The forms that make a key (create, roll) are sent once. Each carries a one-time token; the
// first POST of it makes the key and shows it, a second (a reload of "Your new API key", Back and
// resubmit, a double click) makes nothing and says the key was already made and shown once.
//
// Held in this process, not in the ledger: nothing secret is kept (the new key's hint only), the
// key is still shown by the POST's own answer (no key waits on the server for a GET), and a
// reload reaches the node that answered the POST on the one-upstream nginx site we ship. Behind a
// balancer that spreads one browser over several nodes, a resubmit landing on another node is not
// recognized there and makes a second key, as before this file: a ledger table would fix that, at
// the cost of a migration per backend for what is a courtesy, not a security check (the CSRF
// token already binds every form to its session).
//
// Bounded: at most MAX tokens are remembered, the oldest forgotten first. A token this process can
// no longer vouch for (issued before it started, longer ago than KEEP_MS, or no newer than the last
// one forgotten) is refused as a stale form rather than trusted: the dashboard gives a fresh one.
import { randomBytes } from 'node:crypto';

const MAX = 20_000;
const KEEP_MS = 24 * 3_600_000;
const TOKEN = /^([0-9a-z]{1,11})\.([\w-]{22})$/;

/** What a form made, as its resubmission is told: the key's hint, never the key. */
export interface Made {
  readonly hint: string;
}

export type Claim =
  /** The first POST of this token: go ahead, then settle() or release(). */
  | { readonly kind: 'first'; readonly id: string }
  /** Sent before: what it made (null while the first POST is still being answered). */
  | { readonly kind: 'again'; readonly made: Made | null }
  | { readonly kind: 'stale' }
  /** No token, or not one of ours: the form was not one the dashboard gave. */
  | { readonly kind: 'malformed' };

export class KeyForms {
  private readonly seen = new Map<string, { readonly issuedAt: number; made: Made | null }>();
  /** Tokens issued before this instant cannot be vouched for. */
  private floor: number;
  private readonly now: () => number;
  private readonly max: number;

  constructor(now: () => number, max = MAX) {
    this.now = now;
    this.max = max;
    this.floor = now();
  }

  /** A token for one form: when it was issued (base 36 ms) and 128 random bits. */
  issue(): string {
    return `${this.now().toString(36)}.${randomBytes(16).toString('base64url')}`;
  }

  /** The first POST of `token` in this session claims it; any later one hears what the first made. */
  claim(sessionId: string, token: string | null): Claim {
    const m = TOKEN.exec(token ?? '');
    if (m === null) return { kind: 'malformed' };
    const issuedAt = parseInt(m[1] ?? '', 36);
    const id = `${sessionId}\0${token}`;
    const had = this.seen.get(id);
    if (had !== undefined) return { kind: 'again', made: had.made };
    if (issuedAt < Math.max(this.floor, this.now() - KEEP_MS)) return { kind: 'stale' };
    this.seen.set(id, { issuedAt, made: null });
    while (this.seen.size > this.max) {
      const [oldest, entry] = this.seen.entries().next().value as [string, { issuedAt: number }];
      this.seen.delete(oldest);
      // Forgotten: from now on a token as old as this one might be a resubmission of it.
      this.floor = Math.max(this.floor, entry.issuedAt + 1);
    }
    return { kind: 'first', id };
  }

  /** The key the claimed form made. */
  settle(id: string, made: Made): void {
    const had = this.seen.get(id);
    if (had !== undefined) had.made = made;
  }

  /** Nothing was made (refused, or the ledger was busy): the same form may be sent again. */
  release(id: string): void {
    this.seen.delete(id);
  }
}
