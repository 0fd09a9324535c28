// The dashboard of a signed-in user and the keys of their organization: create, roll (with a
// grace for the old key), revoke. Every form of it returns to the organization it was about.
import * as v from 'valibot';
import type { Reply, Request } from '../../http.ts';
import {
  dashboardPage,
  formErrorPage,
  keyAlreadyMadePage,
  keyLimitPage,
  newKeyPage,
  noOrganizationPage,
  ROLL_GRACES,
  staleKeyFormPage,
  type DashboardInput,
  type DashboardNotice,
} from '../pages/account.ts';
import { must, wallNow, type AccountContext, type Live } from './context.ts';
import { KeyForms, type Made } from './key-forms.ts';
import { keyHint } from '../../../core/keys.ts';
import { ORG_NAME_MAX_CHARS, orgName, type OrgNameProblem } from '../../../ledger/org-name.ts';
import type { AccountRefusal, OrgOfUser } from '../../../ledger/accounts.ts';

const graceSchema = v.picklist(ROLL_GRACES.map(([s]) => s));
const NOTICES: ReadonlySet<string> = new Set<DashboardNotice>(['invited', 'revoked', 'joined', 'renamed', 'invite_cancelled', 'removed']);

/** What the rename form says at its field, per problem with the name. */
const NAME_PROBLEMS: Record<OrgNameProblem, string> = {
  empty: 'Enter a name for the organization.',
  too_long: `A name is at most ${ORG_NAME_MAX_CHARS} characters.`,
  control: 'A name cannot contain line breaks, tabs or other control characters.',
};

/** A form of the dashboard sent back with an error at its field. */
export type FormErrors = Pick<DashboardInput, 'invite' | 'rename'>;

export function dashboardRoutes(ctx: AccountContext) {
  const { site, log, config, accounts, csrf, sessionBinding, page, redirect, forbidden, liveSession, orgOf, signedInPost } = ctx;
  const keyForms = new KeyForms(wallNow);

  const dashboardReply = async (
    s: Live,
    wanted: string | null,
    notice: DashboardNotice | null,
    errors?: FormErrors,
    status = errors === undefined ? 200 : 400,
  ): Promise<Reply> => {
    const route = 'web:/account';
    const found = await orgOf(s.userId, wanted);
    if (found === null) {
      // Removed from their last organization (signed in again since): nothing to show but how to go on.
      const me = await must(accounts.userOf(s.userId));
      return page(200, noOrganizationPage(site, { csrf: csrf.token(sessionBinding(s)), email: me?.email ?? null }), route);
    }
    const { org, orgs } = found;
    const [keys, members, usage, invites] = await Promise.all([
      must(accounts.keysOf(org.id)),
      must(accounts.members(org.id)),
      must(accounts.orgUsage(org.id, config.now().getTime())),
      must(accounts.pendingInvites(org.id, wallNow())),
    ]);
    const input: DashboardInput = {
      csrf: csrf.token(sessionBinding(s)),
      email: members.find((m) => m.user_id === s.userId)?.email ?? null,
      org,
      orgs,
      usage: 'ok' in usage ? null : usage,
      keys,
      members,
      userId: s.userId,
      invites,
      notice,
      ...errors,
      nowMs: wallNow(),
      formToken: () => keyForms.issue(),
    };
    return page(status, dashboardPage(site, input), route, status === 503 ? [['Retry-After', '60']] : []);
  };

  const dashboard = async (req: Request): Promise<Reply> => {
    const s = await liveSession(req);
    if (s === null) return redirect('/account/sign-in', 'web:/account');
    const q = new URLSearchParams(req.rawQuery);
    const notice = q.get('notice');
    return dashboardReply(s, q.get('org'), notice !== null && NOTICES.has(notice) ? (notice as DashboardNotice) : null);
  };

  /** Where a form of the dashboard returns to: the organization it was about. */
  const backTo = (orgId: string, notice?: DashboardNotice): string =>
    `/account?${new URLSearchParams({ org: orgId, ...(notice ? { notice } : {}) }).toString()}`;

  /** The organization has its limit of live keys (ledger/rules.ts): nothing was made. */
  const keyLimited = (r: AccountRefusal, orgId: string, roll: boolean, route: string): Reply => {
    log.info({ org: orgId, limit: 'live_keys', max: r.max }, 'key refused: the organization has its limit of live keys');
    return page(409, keyLimitPage(site, { live: r.live ?? r.max ?? 0, max: r.max ?? 0, orgId, roll }), route);
  };

  /**
   * A form that makes a key, sent once (key-forms.ts): `make` runs for the first POST of its
   * token only, and answers with what it made (null: nothing, the form may be sent again).
   */
  const once = async (
    ok: { s: Live; org: OrgOfUser; form: URLSearchParams },
    route: string,
    roll: boolean,
    make: () => Promise<{ reply: Reply; made: Made | null }>,
  ): Promise<Reply> => {
    const claim = keyForms.claim(ok.s.sessionId, ok.form.get('once'));
    switch (claim.kind) {
      case 'malformed':
        return page(400, formErrorPage(site), route);
      case 'stale':
        return page(409, staleKeyFormPage(site, ok.org.id), route);
      case 'again':
        log.info({ org: ok.org.id }, 'key form sent again: nothing made');
        return page(409, keyAlreadyMadePage(site, { orgId: ok.org.id, hint: claim.made?.hint ?? null, roll }), route);
      case 'first':
        break;
    }
    let done: { reply: Reply; made: Made | null } | undefined;
    try {
      done = await make();
      return done.reply;
    } finally {
      if (done?.made) keyForms.settle(claim.id, done.made);
      else keyForms.release(claim.id);
    }
  };

  const createKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    return once(ok, route, false, async () => {
      const made = await must(accounts.createKeyFor(ok.org.id, ok.s.userId));
      if (!made.ok) return { reply: made.reason === 'too_many_keys' ? keyLimited(made, ok.org.id, false, route) : forbidden(route), made: null };
      log.info({ org: ok.org.id, key_id: made.keyId }, 'key created on the website');
      return { reply: page(200, newKeyPage(site, { key: made.key, nowMs: wallNow() }), route), made: { hint: keyHint(made.key) } };
    });
  };

  const rollKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys/roll';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const keyId = ok.form.get('key_id') ?? '';
    const grace = v.safeParse(graceSchema, ok.form.get('grace'));
    if (!grace.success) return page(400, formErrorPage(site), route);
    return once(ok, route, true, async () => {
      const old = (await must(accounts.keysOf(ok.org.id))).find((k) => k.id === keyId);
      const made = await must(accounts.rollKey(ok.org.id, ok.s.userId, keyId, Number(grace.output) * 1000));
      if (!made.ok && made.reason === 'too_many_keys') return { reply: keyLimited(made, ok.org.id, true, route), made: null };
      // Unknown, another organization's, or no longer active: the list shows how things stand.
      if (!made.ok || old === undefined) return { reply: redirect(backTo(ok.org.id), route), made: null };
      log.info({ org: ok.org.id, key_id: made.keyId, replaces: keyId, revoke_at: made.revokeAt }, 'key rolled on the website');
      return {
        reply: page(200, newKeyPage(site, { key: made.key, replaces: { hint: old.hint, revokeAt: made.revokeAt }, nowMs: wallNow() }), route),
        made: { hint: keyHint(made.key) },
      };
    });
  };

  const revokeKey = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/keys/revoke';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    const keyId = ok.form.get('key_id') ?? '';
    const r = await must(accounts.revokeKey(ok.org.id, keyId));
    if (r.ok) log.info({ org: ok.org.id, key_id: keyId.slice(0, 64) }, 'key revoked on the website');
    return redirect(backTo(ok.org.id, r.ok ? 'revoked' : undefined), route);
  };

  /** The owner renames the organization; an invalid or taken name comes back at its field, as typed. */
  const renameOrg = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/org/rename';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    if (ok.org.role !== 'owner') return forbidden(route);
    const raw = ok.form.get('name') ?? '';
    const again = (error: string, status: number): Promise<Reply> =>
      dashboardReply(ok.s, ok.org.id, null, { rename: { name: [...raw].slice(0, ORG_NAME_MAX_CHARS * 2).join(''), error } }, status);
    const wanted = orgName(raw);
    if (!wanted.ok) return again(NAME_PROBLEMS[wanted.problem], 400);
    const r = await must(accounts.renameOrg(ok.org.id, ok.s.userId, wanted.name));
    if (!r.ok) {
      if (r.reason === 'name_taken') return again('Another organization has this name. Choose another one.', 409);
      if (r.reason === 'invalid') return again(NAME_PROBLEMS.control, 400);
      return forbidden(route);
    }
    // The ledger keeps no audit log: this line is the record of who renamed what.
    if (r.renamed) log.info({ org: ok.org.id, user: ok.s.userId }, 'organization renamed on the website');
    return redirect(`${backTo(ok.org.id, 'renamed')}#organization`, route);
  };

  return { dashboard, dashboardReply, backTo, createKey, rollKey, revokeKey, renameOrg };
}

export type Dashboard = ReturnType<typeof dashboardRoutes>;
