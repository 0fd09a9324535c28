// The website's answers at the ledger's sending limits (issue 26), over real HTTP against the real
// server: invitations past the sender's limit (429 with Retry-After) or past the organization's
// pending invitations (409), keys past the organization's live keys (409, create and roll), and
// sign-in links to spellings of one mailbox. Each time, the outbox (DATA_DIR/outbox, read by
// mailparser) shows that no mail went out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomUtils, parseDocument } from 'htmlparser2';
import { simpleParser } from 'mailparser';
import { INVITE_TOKEN_MAX_MS, INVITES_PER_SENDER, LIVE_KEYS_PER_ORG, PENDING_INVITES_PER_ORG } from '../../../ledger/rules.ts';
import { AccountsDb } from '../../../ledger/sqlite/store.ts';
import { sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';
import { FormBrowser, hiddenFields as form, type Answer } from './form-browser.ts';
import { Outbox } from './outbox.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];
const elements = (page: string): Element[] => DomUtils.findAll(() => true, parseDocument(page).children);
const byId = (page: string, id: string): Element | undefined => elements(page).find((e) => e.attribs.id === id);
const textOf = (el: Element): string => DomUtils.textContent(el);

let fx: Fixture;
let srv: TestServer;
let outbox: Outbox;

before(async () => {
  fx = await sampleFixture();
  outbox = new Outbox(fx.dataDir);
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
});
after(async () => {
  await srv.stop();
  await fx.cleanup();
});

const browser = (): FormBrowser => new FormBrowser(srv.base, WEB);

/** Signs `b` in through the mailed link; the dashboard after. */
async function signIn(b: FormBrowser, email: string): Promise<Answer> {
  const seen = await outbox.names();
  const page = await b.get('/account/sign-in');
  assert.equal((await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email })).status, 303);
  const link = new URL((await outbox.next(seen, 2000, (m) => m.to === email)).link);
  const confirm = await b.get(link.pathname + link.search);
  const done = await b.post('/account/confirm', form(confirm.text, '/account/confirm'));
  assert.equal(done.status, 303, done.text);
  const dash = await b.get('/account');
  assert.equal(dash.status, 200);
  return dash;
}

/**
 * The mails that arrived after `seen`: waits (up to 20 s, for a loaded machine) until `expected` have
 * come, then a moment more so that one too many would show. Mail goes out after the answer, so the
 * answer's arrival says nothing about the outbox; only the count can be waited on.
 */
async function mailsSince(seen: readonly string[], expected: number): Promise<string[]> {
  const before = new Set(seen);
  const fresh = async (): Promise<string[]> => (await outbox.names()).filter((f) => !before.has(f));
  const deadline = Date.now() + 20_000;
  while ((await fresh()).length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  await new Promise((r) => setTimeout(r, 300));
  return fresh();
}

describe('invitations at their limits', () => {
  test("a sender's invitations past the hour's limit: 429 with Retry-After and the form's error, and no mail", async () => {
    const owner = browser();
    const dash = await signIn(owner, 'busy-inviter@example.org');
    const fields = form(dash.text, '/account/members/invite#invite');
    const max = INVITES_PER_SENDER[0]!.max;
    const seen = await outbox.names();
    for (let i = 0; i < max; i++) {
      const r = await owner.post('/account/members/invite', { ...fields, email: `guest${i}@example.org` });
      assert.equal(r.status, 303, `invitation ${i + 1}`);
    }
    const sent = await mailsSince(seen, max);
    assert.equal(sent.length, max);

    // The mail quotes the inviter's proven address, and nothing else the account chose (its subject is ours).
    const mail = await simpleParser((await outbox.read(sent[0]!))!.raw);
    assert.match(mail.text ?? '', /busy-inviter@example\.org invited you/);
    assert.doesNotMatch(mail.subject ?? '', /busy-inviter/);

    const refused = await owner.post('/account/members/invite', { ...fields, email: 'one-too-many@example.org' });
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 3600, `Retry-After ${refused.headers.get('retry-after')}`);
    const error = byId(refused.text, 'invite-email-error');
    assert.ok(error, 'the error at the invitation field');
    assert.match(textOf(error), new RegExp(`sent ${max} invitations in the last hour.*next one in about \\d+ minutes`));
    assert.equal((await mailsSince([...seen, ...sent], 0)).length, 0, 'no mail went out');
  });

  test('pending invitations at the limit: 409 saying to wait for one to be accepted or expire, and no mail', async () => {
    const owner = browser();
    const dash = await signIn(owner, 'pending-owner@example.org');
    const fields = form(dash.text, '/account/members/invite#invite');
    const orgId = fields.org ?? '';
    // The organization's pending invitations, made over the past days (the operator's connection to the ledger).
    const ledger = AccountsDb.open(srv.config.ledgerDir);
    try {
      const t0 = Date.now() - 5 * 24 * 3_600_000;
      for (let i = 0; i < PENDING_INVITES_PER_ORG; i++) {
        const made = ledger.issueLoginToken(
          `waiting${i}@example.org`,
          'invite',
          orgId,
          '',
          INVITE_TOKEN_MAX_MS,
          t0 + Math.floor(i / 10) * 24 * 3_600_000 + (i % 10) * 600_000,
        );
        assert.ok(made.ok, JSON.stringify(made));
      }
    } finally {
      ledger.close();
    }
    const seen = await outbox.names();
    const refused = await owner.post('/account/members/invite', { ...fields, email: 'latecomer@example.org' });
    assert.equal(refused.status, 409);
    const error = byId(refused.text, 'invite-email-error');
    assert.ok(error);
    assert.match(textOf(error), new RegExp(`${PENDING_INVITES_PER_ORG} invitations waiting to be accepted.*accepted, or expires`));
    assert.equal((await mailsSince(seen, 0)).length, 0, 'no mail went out');
  });
});

describe('keys at the limit of live keys', () => {
  test('create past the limit: 409 with what to do, no key made; roll with grace refused, roll without grace works', async () => {
    const owner = browser();
    await signIn(owner, 'many-keys@example.org');
    // Each key from a fresh form, as a person would: a form that made a key makes no other (issue 28).
    const freshForm = async (): Promise<Record<string, string>> => form((await owner.get('/account')).text, '/account/keys');
    for (let i = 0; i < LIVE_KEYS_PER_ORG; i++) assert.equal((await owner.post('/account/keys', await freshForm())).status, 200, `key ${i + 1}`);
    const refused = await owner.post('/account/keys', await freshForm());
    assert.equal(refused.status, 409);
    assert.match(refused.text, new RegExp(`at most ${LIVE_KEYS_PER_ORG} keys`));
    assert.match(refused.text, /Revoke a key you no longer use/);
    assert.equal(
      elements(refused.text).some((e) => e.attribs['data-copy'] === 'API key'),
      false,
      'no key shown',
    );
    const listed = await owner.get('/account');
    const rolls = elements(listed.text).filter((e) => e.name === 'form' && e.attribs.action === '/account/keys/roll');
    assert.equal(rolls.length, LIVE_KEYS_PER_ORG, 'still exactly the limit of keys');

    const roll = form(listed.text, '/account/keys/roll');
    const withGrace = await owner.post('/account/keys/roll', { ...roll, grace: '86400' });
    assert.equal(withGrace.status, 409);
    assert.match(withGrace.text, /Stop the old key now/);
    const now = await owner.post('/account/keys/roll', { ...roll, grace: '0' });
    assert.equal(now.status, 200);
    assert.ok(
      elements(now.text).some((e) => e.attribs['data-copy'] === 'API key'),
      'the new key, shown once',
    );
  });
});

describe('sign-in links per mailbox', () => {
  test('plus-tags and case of one address share its mail limit; every answer is the same', async () => {
    const b = browser();
    const seen = await outbox.names();
    const answers: string[] = [];
    for (const email of ['pat+1@example.org', 'Pat+2@example.org', 'pat@example.org', 'PAT+4@example.org', 'pat+5@example.org']) {
      const page = await b.get('/account/sign-in');
      const r = await b.post('/account/sign-in', { ...form(page.text, '/account/sign-in'), email });
      answers.push(`${r.status} ${r.headers.get('location')} ${r.text}`);
    }
    assert.equal(new Set(answers).size, 1, 'the answer does not tell');
    const sent = await mailsSince(seen, 3);
    assert.equal(sent.length, 3);
    const to = await Promise.all(sent.map(async (f) => (await outbox.read(f))?.to));
    assert.deepEqual(to.sort(), ['Pat+2@example.org', 'pat+1@example.org', 'pat@example.org'].sort(), 'each mail to the address as given');
  });
});
