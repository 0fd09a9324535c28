// The one-time code a sign-in mail carries beside its link (issue 28 item 15), as both ledgers keep
// it: stored as a slow hash the website makes (server/web/account/code.ts), bound to the browser
// that asked, spent with its link (a code and its link are one sign-in: either spends both), and
// dead after CODE_MAX_ATTEMPTS wrong tries. Plain code, shared by ledger/sqlite and ledger/postgres.
import { sameHash } from './rules.ts';
import type { SpentLoginCode } from './accounts.ts';

/**
 * Wrong codes typed in one browser before its codes stop working. With 29^8 codes (about 2^39) and
 * at most 3 mails to an address per 10 minutes (MAIL_LIMIT), someone who asks for codes to another
 * person's address in their own browser gets about 2,200 guesses a day: one chance in 200 million.
 */
export const CODE_MAX_ATTEMPTS = 5;

/** A code of the asking browser, as its query reads it with its link's state. */
export interface LoginCodeRow {
  readonly token_hash: string;
  readonly code_hash: string;
  readonly attempts: number;
  readonly email: string;
  readonly expires_at: string;
  readonly used_at: string | null;
}

/** What to do with a typed code: spend the link it matches, count a wrong try, or refuse. */
export type CodeDecision =
  | { readonly do: 'spend'; readonly tokenHash: string }
  | { readonly do: 'count'; readonly attemptsLeft: number }
  | { readonly do: 'refuse'; readonly answer: SpentLoginCode };

const live = (r: LoginCodeRow, nowMs: number): boolean => r.used_at === null && Date.parse(r.expires_at) > nowMs;

/**
 * The decision for `codeHash` typed in the browser whose codes are `rows` (every one of its
 * sign-ins still stored, live or not). Every row is compared, in constant time, whatever matches:
 * which of them matched does not show in the time taken.
 */
export function decideCode(rows: readonly LoginCodeRow[], codeHash: string, nowMs: number): CodeDecision {
  let match: LoginCodeRow | undefined;
  for (const r of rows) if (sameHash(r.code_hash, codeHash) && match === undefined) match = r;
  if (match !== undefined) {
    if (match.used_at !== null) return { do: 'refuse', answer: { ok: false, reason: 'used' } };
    if (Date.parse(match.expires_at) <= nowMs) return { do: 'refuse', answer: { ok: false, reason: 'expired' } };
    if (match.attempts >= CODE_MAX_ATTEMPTS) return { do: 'refuse', answer: { ok: false, reason: 'too_many' } };
    return { do: 'spend', tokenHash: match.token_hash };
  }
  // A wrong code counts against every code it could have been (each live one of this browser).
  const open = rows.filter((r) => live(r, nowMs) && r.attempts < CODE_MAX_ATTEMPTS);
  if (open.length > 0) return { do: 'count', attemptsLeft: Math.max(...open.map((r) => CODE_MAX_ATTEMPTS - r.attempts - 1)) };
  if (rows.length === 0) return { do: 'refuse', answer: { ok: false, reason: 'none' } };
  if (rows.some((r) => live(r, nowMs))) return { do: 'refuse', answer: { ok: false, reason: 'too_many' } };
  if (rows.some((r) => r.used_at === null)) return { do: 'refuse', answer: { ok: false, reason: 'expired' } };
  return { do: 'refuse', answer: { ok: false, reason: 'used' } };
}
