// The account and usage rules both ledgers (store.ts, pg-store.ts) keep alike: how long links,
// sessions and rolled keys live, when a key counts as revoked, and the /v1/usage body. Plain code,
// so the PostgreSQL thread does not load SQLite to know them.
import { timingSafeEqual } from 'node:crypto';
import { daysBetween, dayAt, isoLocal, periodAt } from './period.ts';
import type { AccountRefusal, LoginPurpose, PeekedLoginToken, Plan, UsageBody } from './accounts.ts';

/** A sign-in link is valid for at most this long, whatever the caller asks. */
export const LOGIN_TOKEN_MAX_MS = 15 * 60_000;
/**
 * An invitation is valid for at most this long: the invitee reads their mail when they do, not
 * within a sign-in's quarter of an hour. It is single use, and it can only make its own addressee a
 * member (spending it proves that mailbox, as a sign-in link does).
 */
export const INVITE_TOKEN_MAX_MS = 7 * 24 * 3600_000;
/** Spent and expired links, and ended sessions, are deleted this long after they stop working. */
export const PURGE_AFTER_MS = 24 * 3600_000;
/** A session's last_seen_at is written at most this often (reads would otherwise all write). */
export const SEEN_GRANULARITY_MS = 60_000;
/** The longest grace a rolled key may keep working. */
export const ROLL_GRACE_MAX_MS = 30 * 24 * 3600_000;
/** The community plan, on which every website sign-up's organization starts (the spec's onboarding). */
export const SIGN_UP_PLAN = 'community';

/** At most `max` in any `windowMs` (a sliding window, counted in the ledger's rows). */
export interface SendWindow {
  readonly max: number;
  readonly windowMs: number;
}
const HOUR_MS = 3600_000;
/**
 * Invitations an account may send, and an organization may be sent from (all its owners
 * together): enough to bring a team in over a day, too few for the service's mail to be anyone's
 * relay. Checked in the ledger before each invitation is made, so they hold across nodes.
 */
export const INVITES_PER_SENDER: readonly SendWindow[] = [
  { max: 10, windowMs: HOUR_MS },
  { max: 30, windowMs: 24 * HOUR_MS },
];
export const INVITES_PER_ORG: readonly SendWindow[] = [
  { max: 20, windowMs: HOUR_MS },
  { max: 50, windowMs: 24 * HOUR_MS },
];
/** Invitations of one organization neither spent nor expired: a new one waits for one to be accepted or to expire. */
export const PENDING_INVITES_PER_ORG = 50;
/**
 * Keys of one organization that the API accepts (unrevoked, and a rolled key until its grace
 * ends: it still answers at its own rate, and rolling again and again would otherwise make live
 * keys without bound). Each key has its own request rate, so this bounds an organization's.
 */
export const LIVE_KEYS_PER_ORG = 10;

/** One window an invitation is checked against: its query (sql/*ledger_queries.sql) and parameters. */
export interface WindowCheck {
  readonly window: SendWindow;
  readonly per: 'sender' | 'organization';
  readonly query: 'invites_nth_recent_by_sender' | 'invites_nth_recent_by_org';
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * The windows a new invitation must fit, each as the query for the max-th newest invitation still
 * inside it: when there is one, the window is full until that one leaves it. An invitation without
 * a sender (none is made so: the website always names one) is counted for its organization only.
 */
export function inviteWindowChecks(sender: string | null, orgId: string, nowMs: number): WindowCheck[] {
  const since = (w: SendWindow): string => new Date(nowMs - w.windowMs).toISOString();
  return [
    ...(sender === null
      ? []
      : INVITES_PER_SENDER.map((w): WindowCheck => ({
          window: w,
          per: 'sender',
          query: 'invites_nth_recent_by_sender',
          params: { user_id: sender, since: since(w), skip: w.max - 1 },
        }))),
    ...INVITES_PER_ORG.map((w): WindowCheck => ({
      window: w,
      per: 'organization',
      query: 'invites_nth_recent_by_org',
      params: { org_id: orgId, since: since(w), skip: w.max - 1 },
    })),
  ];
}

/** The refusal of a full window whose max-th newest invitation was made at `nthCreatedAt`. */
export const windowRefusal = (c: WindowCheck, nthCreatedAt: string, nowMs: number): AccountRefusal => ({
  ok: false,
  reason: 'invite_limited',
  per: c.per,
  max: c.window.max,
  windowMs: c.window.windowMs,
  retryAfterMs: Math.max(0, Date.parse(nthCreatedAt) + c.window.windowMs - nowMs),
});

/** Thrown by the operator's createKey when the organization already has its limit of live keys. */
export class LiveKeysLimitError extends Error {
  readonly orgName: string;
  readonly orgId: string;
  readonly live: number;
  readonly max: number;
  constructor(orgName: string, orgId: string, live: number, max: number) {
    super(`organization ${orgName} has ${live} live keys, and the limit is ${max}`);
    this.orgName = orgName;
    this.orgId = orgId;
    this.live = live;
    this.max = max;
  }
}

/** Equal hex digests, compared in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether a key is refused at `nowMs`: revoked, or its scheduled revocation has come. */
export const keyRevoked = (k: { revoked_at: string | null; revoke_at: string | null }, nowMs: number): boolean =>
  k.revoked_at !== null || (k.revoke_at !== null && Date.parse(k.revoke_at) <= nowMs);

export interface Totals {
  readonly records: number;
  readonly requests: number;
}

/**
 * The /v1/usage body for an organization at an instant, from its usage per day in the period
 * (every day of the period that has any). The one shape both backends answer.
 */
export function usageBody(
  org: { readonly id: string; readonly name: string },
  plan: Plan,
  atMs: number,
  days: readonly (Totals & { day: string })[],
): UsageBody {
  const p = periodAt(atMs);
  const byDay = new Map(days.map((r) => [r.day, r]));
  const used = days.reduce((sum, d) => sum + d.records, 0);
  const requests = days.reduce((sum, d) => sum + d.requests, 0);
  const limit = plan.monthlyRecordLimit;
  return {
    organization: { id: org.id, name: org.name },
    plan: { name: plan.name, monthly_record_limit: limit, excluded_categories: [...plan.excludedCategories], attribution_required: plan.attributionRequired },
    period: { start: isoLocal(p.startMs), end: isoLocal(p.resetMs - 1000), resets_at: isoLocal(p.resetMs) },
    records: { used, remaining: limit === null ? null : Math.max(0, limit - used), limit },
    requests: { count: requests },
    // Every day of the period so far, zeros included, so a chart needs no gap-filling.
    by_day: daysBetween(p.firstDay, dayAt(atMs)).map((date) => ({ date, records: byDay.get(date)?.records ?? 0, requests: byDay.get(date)?.requests ?? 0 })),
  };
}

/** What a key is told when its grant is refused, by either ledger's metering thread. */
export const KEY_REFUSALS = {
  unknown: "This API key does not exist (any more). Create one on the website's account page (/account).",
  revoked: 'This API key has been revoked; use another key of your organization, or create a new one.',
  orphan: 'This API key belongs to no organization.',
} as const;

/** A batch's charges to one key on one day: one usage row, written once when the batch commits. */
export interface DayCharge {
  readonly orgId: string;
  readonly keyId: string;
  readonly day: string;
  records: number;
  requests: number;
}

/** Adds one charged response to the batch's rows, summed per key and day (America/Los_Angeles). */
export function addCharge(rows: Map<string, DayCharge>, key: { readonly keyId: string; readonly orgId: string }, records: number, atMs: number): void {
  const day = dayAt(atMs);
  const k = `${key.keyId}\0${day}`;
  const row = rows.get(k);
  if (row) {
    row.records += records;
    row.requests++;
  } else rows.set(k, { orgId: key.orgId, keyId: key.keyId, day, records, requests: 1 });
}

/** A link's row as login_token_peek reads it (either ledger). */
export interface LoginTokenRow {
  readonly email: string;
  readonly purpose: LoginPurpose;
  readonly org_id: string | null;
  readonly org_name: string | null;
  readonly inviter_email: string | null;
  readonly binding_hash: string;
  readonly expires_at: string;
  readonly used_at: string | null;
}

/**
 * What a link answers for `purpose`, from the browser whose pre-session hashes to `bindingHash`,
 * at `nowMs`: login_token_spend's WHERE, said in words. A link of the other kind is `purpose`
 * before anything else, so its page can say it is not for this page. Another browser's attempt is
 * `binding` (an invitation is bound to none: it is opened by someone other than who asked for it).
 */
export function loginTokenAnswer(row: LoginTokenRow | undefined, purpose: LoginPurpose, bindingHash: string, nowMs: number): PeekedLoginToken {
  if (row === undefined) return { ok: false, reason: 'unknown' };
  if (row.purpose !== purpose) return { ok: false, reason: 'purpose' };
  if (row.used_at !== null) return { ok: false, reason: 'used' };
  if (Date.parse(row.expires_at) <= nowMs) return { ok: false, reason: 'expired' };
  if (row.purpose === 'sign_in' && !sameHash(row.binding_hash, bindingHash)) return { ok: false, reason: 'binding' };
  return { ok: true, email: row.email, purpose: row.purpose, orgId: row.org_id, orgName: row.org_name, inviter: row.inviter_email };
}
