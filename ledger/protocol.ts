// What crosses between the server's main thread and the ledger's thread (ledger/sqlite/thread.ts
// or ledger/postgres/thread.ts), the one writer of the usage ledger: the main thread sends batches of
// requests; the thread answers each by id, after the transaction holding its charge has been
// committed. The accounts store is reached the same way: every account operation is a request to
// the thread, and the main thread never runs SQL. Types only, but for the list of account calls
// the thread's dispatch checks names against.
import type {
  AccountRefusal,
  KeyInfo,
  KeySummary,
  LoginPurpose,
  MailLimit,
  Member,
  NewKey,
  OrgAdminRefusal,
  OrgOfUser,
  PendingInvite,
  PeekedLoginToken,
  Plan,
  QuotaState,
  SignedIn,
  SpentLoginCode,
  SpentLoginToken,
  UsageBody,
  User,
} from './accounts.ts';

/** Every account operation, as the metering thread runs it (ledger/sqlite/store.ts AccountsDb). */
export interface AccountCalls {
  /** A sign-in or invitation link's token (stored hashed). Answers alike whether the address has an account. */
  issueLoginToken(
    email: string,
    purpose: LoginPurpose,
    orgId: string | null,
    bindingHash: string,
    ttlMs: number,
    nowMs?: number,
    limit?: MailLimit | null,
    /** The account sending an invitation: its limits, and its organization's, are checked (rules.ts). */
    sender?: string | null,
  ): { readonly ok: true; readonly token: string } | AccountRefusal;
  /**
   * Spends a token once, from the browser it was issued to, before it expires, and only for the
   * purpose it was made for: a link of the other kind is refused (`purpose`) and stays unspent.
   */
  spendLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): SpentLoginToken;
  /** What spendLoginToken would answer now, spending nothing (the page a link opens). */
  peekLoginToken(token: string, purpose: LoginPurpose, bindingHash: string, nowMs: number): PeekedLoginToken;
  /** Keeps the slow hash of a sign-in link's code (ledger/codes.ts); `attached` false: no such sign-in link. */
  attachLoginCode(token: string, codeHash: string): { readonly attached: boolean };
  /** A code typed in the browser bound by `bindingHash`: spends its link, or counts a wrong try. */
  spendLoginCode(bindingHash: string, codeHash: string, nowMs: number): SpentLoginCode;
  /** A user by id (the signed-in one's address); null when there is none. */
  userOf(userId: string): User | null;
  /** The account of a proven e-mail address, made (with an organization on Community) on first sign-in. */
  signInByEmail(email: string): SignedIn;
  /** The account of an identity provider's (issuer, subject), made on first sign-in. */
  signInByIdentity(issuer: string, subject: string, email: string | null, emailVerified: boolean): SignedIn;
  createSession(userId: string, absoluteTtlMs: number): { readonly ok: true; readonly token: string; readonly sessionId: string } | AccountRefusal;
  /** The session's user, or null when unknown, ended, idle too long or past its absolute expiry. */
  touchSession(token: string, nowMs: number, idleMs: number): { readonly userId: string; readonly sessionId: string } | null;
  endSession(token: string, nowMs: number): { readonly ended: boolean };
  endAllSessions(userId: string, nowMs: number): { readonly ended: number };
  organizationsOf(userId: string): readonly OrgOfUser[];
  acceptInvite(userId: string, orgId: string): { readonly ok: true; readonly joined: boolean } | AccountRefusal;
  /** The account of an invitation's addressee (made without an organization of its own when new), now a member. */
  joinByInvite(email: string, orgId: string): SignedIn | AccountRefusal;
  members(orgId: string): readonly Member[];
  keysOf(orgId: string): readonly KeySummary[];
  createKeyFor(orgId: string, userId: string): NewKey | AccountRefusal;
  revokeKey(orgId: string, keyId: string): { readonly ok: true; readonly revoked: boolean } | AccountRefusal;
  /** A new key for the organization; the old one is refused from `revokeAt` (now + graceMs). */
  rollKey(orgId: string, userId: string, keyId: string, graceMs: number): (NewKey & { readonly revokeAt: string }) | AccountRefusal;
  /** The organization's usage in the period holding `atMs`: the body /v1/usage answers, whatever its keys' states. */
  orgUsage(orgId: string, atMs: number): UsageBody | AccountRefusal;
  // What an owner does to the organization (issue 28 item 12); `userId` is who asks, checked here.
  /** A new name (ledger/org-name.ts), unless another organization has it in any case. */
  renameOrg(orgId: string, userId: string, name: string): { readonly ok: true; readonly name: string; readonly renamed: boolean } | OrgAdminRefusal;
  /** Invitations of the organization still waiting at `nowMs`, newest first. */
  pendingInvites(orgId: string, nowMs: number): readonly PendingInvite[];
  /** The invitation stops working now (kept, so it still counts against the sending limits). */
  cancelInvite(orgId: string, userId: string, inviteId: string, nowMs: number): { readonly ok: true; readonly cancelled: boolean } | OrgAdminRefusal;
  /**
   * The member leaves the organization; never its last owner. A removed account left in no
   * organization is signed out everywhere (`sessionsEnded`): it has nothing left to see.
   */
  removeMember(orgId: string, userId: string, memberId: string, nowMs: number): { readonly ok: true; readonly sessionsEnded: number } | OrgAdminRefusal;
}

export type AccountCall = keyof AccountCalls;

// A record, so that the compiler insists every call is listed exactly once.
const CALL_NAMES: Record<AccountCall, true> = {
  issueLoginToken: true,
  spendLoginToken: true,
  peekLoginToken: true,
  attachLoginCode: true,
  spendLoginCode: true,
  userOf: true,
  signInByEmail: true,
  signInByIdentity: true,
  createSession: true,
  touchSession: true,
  endSession: true,
  endAllSessions: true,
  organizationsOf: true,
  acceptInvite: true,
  joinByInvite: true,
  members: true,
  keysOf: true,
  createKeyFor: true,
  revokeKey: true,
  rollKey: true,
  orgUsage: true,
  renameOrg: true,
  pendingInvites: true,
  cancelInvite: true,
  removeMember: true,
};
/** The calls, for the main thread's client and the thread's dispatch (which refuses any other name). */
export const ACCOUNT_CALLS = Object.keys(CALL_NAMES) as AccountCall[];

/** One account operation as a request: its name and its arguments. */
export type AccountRequest = {
  [K in AccountCall]: { readonly op: 'account'; readonly id: number; readonly call: K; readonly args: Parameters<AccountCalls[K]> };
}[AccountCall];

export type MeterRequest =
  /** A key the main thread does not know: re-read the accounts (it may have just been created). */
  | { readonly op: 'lookup'; readonly id: number; readonly hash: string }
  /**
   * Hold up to `want` records of the key's organization. With `settle`, a full grant is charged
   * at once (the answer is already known: a cached page); otherwise a reservation is returned, to
   * be committed with what was delivered or released.
   */
  | { readonly op: 'reserve'; readonly id: number; readonly keyId: string; readonly want: number; readonly settle: boolean; readonly atMs: number }
  | { readonly op: 'commit'; readonly id: number; readonly reservation: number; readonly delivered: number; readonly atMs: number }
  | { readonly op: 'release'; readonly reservation: number }
  | { readonly op: 'peek'; readonly id: number; readonly keyId: string; readonly atMs: number }
  | { readonly op: 'usage'; readonly id: number; readonly keyId: string; readonly atMs: number }
  | AccountRequest;

export type MeterReply =
  | { readonly id: number; readonly ok: true; readonly key: KeyInfo | null }
  | {
      readonly id: number;
      readonly ok: true;
      readonly granted: number;
      /** Null when nothing is held: the grant was settled (charged) at once, or nothing was granted. */
      readonly reservation: number | null;
      readonly quota: QuotaState;
    }
  | { readonly id: number; readonly ok: true; readonly quota: QuotaState }
  | { readonly id: number; readonly ok: true; readonly usage: UsageBody; readonly quota: QuotaState }
  /** An account operation's result: ReturnType<AccountCalls[call]> of the request's call. */
  | { readonly id: number; readonly ok: true; readonly account: unknown }
  | { readonly id: number; readonly ok: false; readonly code: 'invalid_api_key' | 'unavailable'; readonly detail: string };

/** Main thread → thread: finish the batch in hand, close the files, release the lock, exit. */
export type MeterControl = { readonly op: 'close' };

/** Thread → main thread. */
export type MeterMessage =
  | { readonly type: 'accounts'; readonly keys: readonly KeyInfo[]; readonly plans: readonly Plan[] }
  | {
      readonly type: 'replies';
      readonly replies: readonly MeterReply[];
      readonly batch: { readonly ops: number; readonly charges: number; readonly commitMs: number };
    }
  | { readonly type: 'failed'; readonly detail: string }
  /**
   * Something went wrong that the thread survived (a failed write or read, answered `unavailable`):
   * logged by the main thread, so it lands in the server's structured log with the other lines.
   */
  | { readonly type: 'warning'; readonly msg: string; readonly detail: string; readonly call?: AccountCall }
  /** The shared ledger became reachable (ok) or not; until ok again, every request answers `unavailable`. */
  | { readonly type: 'health'; readonly ok: boolean; readonly detail: string }
  /** The snapshot the shared ledger says every node should answer from (at start, and on each change). */
  | { readonly type: 'snapshot'; readonly id: string }
  /** The website's signing key every node of the shared ledger uses (base64url), once it is known. */
  | { readonly type: 'web_secret'; readonly secret: string }
  | { readonly type: 'closed' };

export interface MeterWorkerData {
  readonly ledgerDir: string;
  /** How often the accounts file is checked for changes while no request arrives. */
  readonly accountsPollMs: number;
}

/** The metering thread on the shared PostgreSQL ledger (ledger/postgres/thread.ts). */
export interface PgMeterWorkerData {
  readonly database: { readonly url: string; readonly poolMax: number; readonly statementTimeoutMs: number };
  /** Names this node's holds in the ledger. */
  readonly nodeName: string;
  /** How long a hold of records lives unless charged or released: a dead node's holds come back after it. */
  readonly holdTtlMs: number;
  /** This node's own website key (LEDGER_DIR/web-secret, base64url): the cluster's if no node has set one. */
  readonly webSecret: string;
}
