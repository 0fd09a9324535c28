// The ledger's model: plans, keys, quota and usage, and the developer accounts of the website, as
// the stores return them and the server and the website read them. Types only.

/** A plan, as a row of the accounts store. */
export interface Plan {
  readonly name: string;
  /** Event records per calendar month (America/Los_Angeles), or null for no cap. */
  readonly monthlyRecordLimit: number | null;
  /** Sorted slugs whose events never appear in this plan's results (asking for one is a 403). */
  readonly excludedCategories: readonly string[];
  readonly attributionRequired: boolean;
  /** Live requests a minute per key. */
  readonly requestsPerMinute: number;
}

/** A key as the main thread authenticates it: by the SHA-256 of the presented key. */
export interface KeyInfo {
  readonly keyId: string;
  readonly hash: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly plan: Plan;
  readonly revoked: boolean;
}

/** Where an organization stands in its current period, for the quota headers. */
export interface QuotaState {
  readonly orgId: string;
  readonly plan: string;
  /** Null: no cap. */
  readonly limit: number | null;
  readonly used: number;
  /** Null: no cap. Reserved-but-uncommitted records already count as used here. */
  readonly remaining: number | null;
  readonly periodStartMs: number;
  readonly resetMs: number;
}

/** The /v1/usage body (see the contract's "Usage body"). */
export interface UsageBody {
  readonly organization: { readonly id: string; readonly name: string };
  readonly plan: {
    readonly name: string;
    readonly monthly_record_limit: number | null;
    readonly excluded_categories: readonly string[];
    readonly attribution_required: boolean;
  };
  readonly period: { readonly start: string; readonly end: string; readonly resets_at: string };
  readonly records: { readonly used: number; readonly remaining: number | null; readonly limit: number | null };
  readonly requests: { readonly count: number };
  readonly by_day: readonly { readonly date: string; readonly records: number; readonly requests: number }[];
}

// Developer accounts (the website).

export type LoginPurpose = 'sign_in' | 'invite';
export type Role = 'owner' | 'member';

/** Why an account operation did nothing. */
export type AccountRefusal = {
  readonly ok: false;
  readonly reason: 'unknown_user' | 'unknown_org' | 'not_member' | 'unknown_key' | 'not_active' | 'invalid' | 'limited' | SendRefusal;
  /** For `invite_limited`: whose limit (the sending account's or its organization's), and when one more may be sent. */
  readonly per?: 'sender' | 'organization';
  readonly windowMs?: number;
  readonly retryAfterMs?: number;
  /** For the limits: the limit that was reached (and, for `too_many_keys`, the live keys counted). */
  readonly max?: number;
  readonly live?: number;
};

/**
 * The ledger's limits on what an account can make the service send or spend
 * (ledger/rules.ts): invitations per sender and per organization in a window, pending
 * invitations per organization, live keys per organization.
 */
export type SendRefusal = 'invite_limited' | 'too_many_pending' | 'too_many_keys';

/**
 * At most `max` links (sign-in and invitation alike) to one address in `windowMs`, counted in the
 * ledger, so the limit holds across nodes and restarts; beyond it, the refusal `limited`.
 */
export interface MailLimit {
  readonly max: number;
  readonly windowMs: number;
}

/** Why a link was not spent (or would not be): `purpose`, a link of the other kind, is left unspent for its own page. */
export type LoginTokenRefusal = { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'used' | 'binding' | 'purpose' };

export type SpentLoginToken = { readonly ok: true; readonly email: string; readonly purpose: LoginPurpose; readonly orgId: string | null } | LoginTokenRefusal;

/** A link as its page shows it before anything is spent: whom it is for, and an invitation's organization and inviter. */
export type PeekedLoginToken =
  | {
      readonly ok: true;
      readonly email: string;
      readonly purpose: LoginPurpose;
      readonly orgId: string | null;
      readonly orgName: string | null;
      /** The inviter's e-mail; null for a sign-in link, or an inviter the ledger knows no address of. */
      readonly inviter: string | null;
    }
  | LoginTokenRefusal;

export interface User {
  readonly id: string;
  /** An address the person proved to own; null for an identity whose provider verified none. */
  readonly email: string | null;
  readonly created_at: string;
}

/** Who signed in; `orgId` is the organization made for a new account (null for a returning one). */
export interface SignedIn {
  readonly user: User;
  readonly created: boolean;
  readonly orgId: string | null;
}

export interface OrgOfUser {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly role: Role;
}

export interface Member {
  readonly user_id: string;
  readonly email: string | null;
  readonly role: Role;
  readonly created_at: string;
}

/** A key as its organization's members see it: never the key, nor its hash. */
export interface KeySummary {
  readonly id: string;
  readonly hint: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  /** A scheduled revocation (a roll's grace period): refused from this instant. */
  readonly revoke_at: string | null;
  /** The website user who made it; null for a command-line key. */
  readonly created_by: string | null;
  /** The last day (YYYY-MM-DD, America/Los_Angeles) it was used on, or null. */
  readonly last_used: string | null;
}

/** A new key: the only time the key itself leaves the thread. */
export type NewKey = { readonly ok: true; readonly keyId: string; readonly key: string };

// As both stores read them (ledger/sqlite/store.ts, ledger/postgres/store.ts).

export interface OrgRow {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly created_at: string;
}

export interface KeyRow {
  readonly id: string;
  readonly org_id: string;
  readonly org_name: string;
  readonly key_hash: string;
  readonly hint: string;
  readonly email: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly revoke_at: string | null;
  readonly created_by: string | null;
}

/** Everything the server needs to authenticate and meter, read in one go. */
export interface AccountsView {
  readonly plans: ReadonlyMap<string, Plan>;
  readonly orgs: ReadonlyMap<string, OrgRow>;
  readonly keys: readonly KeyInfo[];
  /** The next scheduled revocation still to come (Infinity: none): the view is stale from then. */
  readonly nextRevokeAtMs: number;
}

/**
 * A sign-in code typed where the sign-in began (ledger/codes.ts): the address it signs in, or why
 * not. `wrong` says how many tries the browser's code has left (0: that was the last, it is dead).
 */
export type SpentLoginCode =
  | { readonly ok: true; readonly email: string }
  | { readonly ok: false; readonly reason: 'wrong'; readonly attemptsLeft: number }
  | { readonly ok: false; readonly reason: 'none' | 'expired' | 'used' | 'too_many' };

// What an owner does to their organization (issue 28 item 12): rename it, see and cancel its
// pending invitations, remove a member. Kept apart from AccountRefusal: these answers name who may.

/** Why an owner's change to the organization did nothing. */
export type OrgAdminRefusal = {
  readonly ok: false;
  readonly reason: 'unknown_org' | 'not_owner' | 'invalid' | 'name_taken' | 'unknown_member' | 'last_owner' | 'unknown_invite';
};

/** An invitation not yet accepted, cancelled or expired, as its organization's members see it. */
export interface PendingInvite {
  /** The link's stored SHA-256: it names the invitation to cancel; the link cannot be made from it. */
  readonly id: string;
  readonly email: string;
  readonly created_at: string;
  readonly expires_at: string;
  /** The inviter's e-mail; null when the ledger knows none. */
  readonly invited_by: string | null;
}
