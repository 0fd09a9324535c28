// Members and invitations: an owner invites an address (within the ledger's sending limits), and
// the invitee accepts in their browser, which ends up signed in as them.
import * as v from 'valibot';
import type { Reply, Request } from '../../http.ts';
import { inviteFailedPage, inviteLimitMessage, lastOwnerPage, switchAccountPage, type InviteLimit } from '../pages/account.ts';
import { tokenHash } from '../session.ts';
import { emailField, MAIL_LIMIT, must, wallNow, type AccountContext, type Live } from './context.ts';
import type { Dashboard } from './dashboard.ts';
import type { MailedLinks } from './links.ts';
import type { AccountRefusal } from '../../../ledger/accounts.ts';

const INVITE_TTL_MS = 7 * 24 * 3_600_000;
/** An invitation mail quotes the inviter's address up to this long (an RFC 5321 local part is at most 64). */
const INVITER_MAX_CHARS = 100;

/** An invitation refused by one of the ledger's sending limits, as its message needs it; null for any other refusal. */
function inviteLimitOf(r: AccountRefusal): InviteLimit | null {
  if (r.reason === 'invite_limited') {
    const windowMs = r.windowMs ?? 24 * 3_600_000;
    return { reason: 'invite_limited', per: r.per ?? 'organization', max: r.max ?? 0, windowMs, retryAfterMs: r.retryAfterMs ?? windowMs };
  }
  if (r.reason === 'too_many_pending') return { reason: 'too_many_pending', max: r.max ?? 0 };
  // The mailbox's limit: its window is the most there is to wait.
  if (r.reason === 'limited') return { reason: 'limited', retryAfterMs: MAIL_LIMIT.windowMs };
  return null;
}

const inviteSchema = emailField('Enter the e-mail address to invite.');

export function memberRoutes(ctx: AccountContext, links: MailedLinks, dash: Dashboard) {
  const { deps, site, log, config, accounts, csrf, preBinding, page, redirect, forbidden, liveSession, startSession, prePost, signedInPost } = ctx;
  const { linkFailed, tokenIn } = links;
  const { dashboardReply, backTo } = dash;

  const invite = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/members/invite';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    if (ok.org.role !== 'owner') return forbidden(route);
    const raw = ok.form.get('email') ?? '';
    const parsed = v.safeParse(inviteSchema, raw);
    const again = (error: string): Promise<Reply> => dashboardReply(ok.s, ok.org.id, null, { invite: { email: raw.slice(0, 254), error } });
    if (!parsed.success) return again(parsed.issues[0].message);
    const email = parsed.output;
    const members = await must(accounts.members(ok.org.id));
    if (members.some((m) => m.email !== null && m.email.toLowerCase() === email.toLowerCase())) return again(`${email} is already a member of ${ok.org.name}.`);
    // Bound to no browser: the invitee opens it in theirs (the store does not check an invitation's binding).
    // The ledger counts it against the sender's, the organization's and the mailbox's limits first.
    const issued = await must(accounts.issueLoginToken(email, 'invite', ok.org.id, '', INVITE_TTL_MS, Date.now(), MAIL_LIMIT, ok.s.userId));
    if (!issued.ok) {
      const limit = inviteLimitOf(issued);
      if (limit === null) return forbidden(route);
      log.info({ org: ok.org.id, limit: issued.reason, per: issued.per }, 'invitation refused: a sending limit');
      // Too many sent recently: 429 with when to try again. Too many pending: waiting will not do
      // (an invitation leaves the count when accepted or expired), so it is a 409 with what to do.
      const status = limit.reason === 'too_many_pending' ? 409 : 429;
      const reply = await dashboardReply(ok.s, ok.org.id, null, { invite: { email, error: inviteLimitMessage(limit, ok.org.name) } }, status);
      return 'retryAfterMs' in limit
        ? { ...reply, headers: [...reply.headers, ['Retry-After', String(Math.max(1, Math.ceil(limit.retryAfterMs / 1000)))]] }
        : reply;
    }
    // The mail quotes nothing the inviting account chose but its own address, which it proved it
    // receives mail at (bounded): no organization name, no free text, so an account cannot make the
    // service's sender say "claim your prize at …". The page the link opens names the organization.
    const inviterAddress = members.find((m) => m.user_id === ok.s.userId)?.email ?? null;
    const inviter =
      inviterAddress === null
        ? 'A member of an organization'
        : inviterAddress.length <= INVITER_MAX_CHARS
          ? inviterAddress
          : `${inviterAddress.slice(0, INVITER_MAX_CHARS - 1)}…`;
    const link = `${config.webBaseUrl}/account/invite?token=${encodeURIComponent(issued.token)}`;
    try {
      // Awaited, unlike a sign-in link's: the inviter is told whether the invitation went out.
      await deps.mailer.send({
        to: email,
        subject: `An invitation to ${site.name}`,
        text: `${inviter} invited you to join their organization on ${site.name}, to share its API keys and usage.\n\nOpen this link to see the invitation and accept it:\n\n${link}\n\nIt works once, for 7 days. If you did not expect it, ignore this mail.\n`,
        kind: 'invite',
      });
    } catch (err) {
      log.warn({ mail: 'invite', err: (err as Error).message }, 'invitation mail failed');
      return dashboardReply(
        ok.s,
        ok.org.id,
        null,
        { invite: { email, error: 'The invitation could not be sent just now. Please try again in a minute.' } },
        503,
      );
    }
    log.info({ org: ok.org.id }, 'invitation sent');
    return redirect(`${backTo(ok.org.id, 'invited')}#members`, route);
  };

  /** The owner cancels a pending invitation: its link stops working. */
  const cancelInvite = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/invitations/cancel';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    if (ok.org.role !== 'owner') return forbidden(route);
    const r = await must(accounts.cancelInvite(ok.org.id, ok.s.userId, (ok.form.get('invite') ?? '').slice(0, 64), wallNow()));
    if (!r.ok) return forbidden(route);
    // Accepted, expired or cancelled meanwhile: the list shows how things stand.
    if (r.cancelled) log.info({ org: ok.org.id, user: ok.s.userId }, 'invitation cancelled on the website');
    return redirect(`${backTo(ok.org.id, r.cancelled ? 'invite_cancelled' : undefined)}#members`, route);
  };

  /**
   * The owner removes a member (or leaves, while another owner stays). Every request reads the
   * memberships again, so the removed account's access to the organization ends with this answer;
   * one left in no organization is signed out everywhere by the ledger.
   */
  const removeMember = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/members/remove';
    const ok = await signedInPost(req, route);
    if ('status' in ok) return ok;
    if (ok.org.role !== 'owner') return forbidden(route);
    const memberId = (ok.form.get('member') ?? '').slice(0, 64);
    const r = await must(accounts.removeMember(ok.org.id, ok.s.userId, memberId, wallNow()));
    if (!r.ok) {
      if (r.reason === 'last_owner') return page(409, lastOwnerPage(site, ok.org.id), route);
      // Removed meanwhile (by another owner, or this form sent twice): the list shows how things stand.
      if (r.reason === 'unknown_member') return redirect(`${backTo(ok.org.id)}#members`, route);
      return forbidden(route);
    }
    // The ledger keeps no audit log: this line is the record of who removed whom.
    log.info({ org: ok.org.id, user: ok.s.userId, removed: memberId, sessions_ended: r.sessionsEnded }, 'member removed on the website');
    // Leaving: the organization is no longer theirs to show.
    if (memberId === ok.s.userId) return redirect('/account', route);
    return redirect(`${backTo(ok.org.id, 'removed')}#members`, route);
  };

  /** What the question page's "continue" carries: worth nothing but for this browser, this session and this invitation. */
  const switchBinding = (pre: string, s: Live, token: string): string => `switch\0${pre}\0${s.sessionId}\0${tokenHash(token)}`;

  /**
   * An invitation's POST. Spending it proves the mailbox, as a sign-in link does: the browser ends
   * up signed in as its addressee. A browser signed in as someone else is asked first (a page naming
   * both), and only the explicit "continue" of that page, checked against this session, spends the
   * link and switches; signed in as the addressee already (same address, any case), it just joins.
   */
  const acceptInvite = async (req: Request): Promise<Reply> => {
    const route = 'web:/account/invite';
    const posted = prePost(req, route);
    if ('status' in posted) return posted;
    const { pre, form } = posted;
    const token = tokenIn(form.get('token'));
    const s = await liveSession(req);
    let replacing: Live | null = null;
    if (s !== null) {
      const seen = await must(accounts.peekLoginToken(token, 'invite', tokenHash(pre), wallNow()));
      if (!seen.ok) return linkFailed('invite', seen, route);
      const me = await must(accounts.userOf(s.userId));
      const isAddressee = me?.email != null && me.email.toLowerCase() === seen.email.toLowerCase();
      if (!isAddressee) {
        if (!csrf.check(switchBinding(pre, s, token), form.get('confirm'))) {
          const question = {
            token,
            csrf: csrf.token(preBinding(pre)),
            confirm: csrf.token(switchBinding(pre, s, token)),
            signedInAs: me?.email ?? null,
            email: seen.email,
            orgName: seen.orgName ?? 'an organization',
            inviter: seen.inviter,
          };
          return page(200, switchAccountPage(site, question), route);
        }
        replacing = s;
      }
    }
    const spent = await must(accounts.spendLoginToken(token, 'invite', tokenHash(pre), wallNow()));
    if (!spent.ok) return linkFailed('invite', spent, route);
    if (spent.orgId === null) return page(400, inviteFailedPage(site), route);
    const joined = await must(accounts.joinByInvite(spent.email, spent.orgId));
    if (!('user' in joined)) return page(400, inviteFailedPage(site), route);
    log.info({ user: joined.user.id, org: spent.orgId, created: joined.created }, 'invitation accepted');
    // Already signed in as the addressee: the session goes on.
    if (s !== null && replacing === null && joined.user.id === s.userId) return redirect(backTo(spent.orgId, 'joined'), route);
    // "Continue as B (signs you out of A)": A's session ends here, not only its cookie.
    if (replacing !== null) {
      await must(accounts.endSession(replacing.token, wallNow()));
      log.info({ user: joined.user.id, replaced_user: replacing.userId }, 'invitation accepted in a browser signed in as another account');
    }
    const cookies = await startSession(joined.user.id, req);
    if (cookies === null) return page(400, inviteFailedPage(site), route);
    return redirect(backTo(spent.orgId, 'joined'), route, cookies);
  };

  return { invite, acceptInvite, cancelInvite, removeMember };
}
