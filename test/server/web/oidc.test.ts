// The relying party against a real OpenID provider on loopback (see idp.ts for how sign-in is driven).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { OidcClient, OidcError, type OidcFailure, type OidcTransaction } from '../../../server/web/oidc.ts';
import { startIdp, type Idp } from './idp.ts';
import { freePort } from '../../ports.ts';

const redirectUri = 'https://rp.example.test/auth/oidc/callback';
const client = { clientId: 'family-events', clientSecret: 'a-test-secret-that-is-long-enough-0123456789', redirectUri };
const accounts = {
  ada: { email: 'ada@example.org', email_verified: true },
  bob: { email: 'bob@example.org', email_verified: false },
  cyd: {},
};

let viaUserInfo: Idp;
let viaIdToken: Idp;
let rp: OidcClient;

before(async () => {
  [viaUserInfo, viaIdToken] = await Promise.all([startIdp({ ...client, accounts }), startIdp({ ...client, accounts, claimsInIdToken: true })]);
  rp = await OidcClient.discover({ ...client, issuer: viaUserInfo.issuer, allowHttp: true });
});
after(async () => {
  await Promise.all([viaUserInfo.close(), viaIdToken.close()]);
});

async function signIn(idp: Idp, relyingParty: OidcClient, login: string): Promise<{ callback: URL; transaction: OidcTransaction }> {
  const { url, transaction } = await relyingParty.start();
  return { callback: await idp.authorize(url, { login }), transaction };
}

async function refused(promise: Promise<unknown>, reason: OidcFailure): Promise<OidcError> {
  const err = await promise.then(
    () => assert.fail(`expected an OidcError(${reason})`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OidcError, `not an OidcError: ${String(err)}`);
  assert.equal(err.reason, reason, err.message);
  return err;
}

describe('authorization request', () => {
  test('is a code request with PKCE S256, state, nonce and the openid email scope', async () => {
    const { url, transaction } = await rp.start();
    const q = new URL(url).searchParams;
    assert.equal(new URL(url).origin, viaUserInfo.issuer);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), client.clientId);
    assert.equal(q.get('redirect_uri'), redirectUri);
    assert.deepEqual(q.get('scope')?.split(' ').sort(), ['email', 'openid']);
    assert.equal(q.get('code_challenge_method'), 'S256');
    // RFC 7636 §4.2, computed independently of openid-client.
    assert.equal(q.get('code_challenge'), createHash('sha256').update(transaction.codeVerifier).digest('base64url'));
    assert.equal(q.get('state'), transaction.state);
    assert.equal(q.get('nonce'), transaction.nonce);
    assert.equal(url.includes(transaction.codeVerifier), false, 'the verifier never leaves the server');
  });

  test('every transaction is fresh, with at least 128 bits in each secret', async () => {
    const a = (await rp.start()).transaction;
    const b = (await rp.start()).transaction;
    for (const key of ['state', 'nonce', 'codeVerifier'] as const) {
      assert.notEqual(a[key], b[key]);
      assert.ok(Buffer.from(a[key], 'base64url').length >= 16, `${key} too short`);
    }
  });
});

describe('code flow', () => {
  test('yields the issuer, subject and verified e-mail (claims from UserInfo)', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    assert.equal(callback.origin + callback.pathname, redirectUri);
    assert.deepEqual(await rp.finish(callback, transaction), {
      issuer: viaUserInfo.issuer,
      subject: 'ada',
      email: 'ada@example.org',
      emailVerified: true,
    });
  });

  test('yields the same from claims carried in the ID token', async () => {
    const other = await OidcClient.discover({ ...client, issuer: viaIdToken.issuer, allowHttp: true });
    const { callback, transaction } = await signIn(viaIdToken, other, 'ada');
    assert.deepEqual(await other.finish(callback, transaction), {
      issuer: viaIdToken.issuer,
      subject: 'ada',
      email: 'ada@example.org',
      emailVerified: true,
    });
  });

  test('an unverified e-mail is reported as such, a missing one as null', async () => {
    const bob = await signIn(viaUserInfo, rp, 'bob');
    assert.deepEqual(await rp.finish(bob.callback, bob.transaction), {
      issuer: viaUserInfo.issuer,
      subject: 'bob',
      email: 'bob@example.org',
      emailVerified: false,
    });
    const cyd = await signIn(viaUserInfo, rp, 'cyd');
    assert.deepEqual(await rp.finish(cyd.callback, cyd.transaction), {
      issuer: viaUserInfo.issuer,
      subject: 'cyd',
      email: null,
      emailVerified: false,
    });
  });

  test('only the query of the callback URL counts (the server may see another host behind a proxy)', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    const seen = new URL(`http://127.0.0.1:3000/auth/oidc/callback${callback.search}`);
    assert.equal((await rp.finish(seen, transaction)).subject, 'ada');
  });
});

describe('refusals', () => {
  test('a tampered or missing state is refused before the code is spent', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${transaction.state.slice(0, -1)}${transaction.state.endsWith('A') ? 'B' : 'A'}`);
    await refused(rp.finish(tampered, transaction), 'state_mismatch');
    const missing = new URL(callback);
    missing.searchParams.delete('state');
    await refused(rp.finish(missing, transaction), 'state_mismatch');
    // The genuine callback still works, so the refusals never reached the token endpoint.
    assert.equal((await rp.finish(callback, transaction)).subject, 'ada');
  });

  test("another sign-in's callback is refused (state bound to the transaction)", async () => {
    const mine = await rp.start();
    const theirs = await signIn(viaUserInfo, rp, 'ada');
    await refused(rp.finish(theirs.callback, mine.transaction), 'state_mismatch');
  });

  test('a replayed code is refused by the token endpoint', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    await rp.finish(callback, transaction);
    const err = await refused(rp.finish(callback, transaction), 'token_exchange');
    assert.equal(err.providerError, 'invalid_grant');
  });

  test('a wrong code verifier is refused by the token endpoint', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    const err = await refused(rp.finish(callback, { ...transaction, codeVerifier: (await rp.start()).transaction.codeVerifier }), 'token_exchange');
    assert.equal(err.providerError, 'invalid_grant');
  });

  test('a wrong nonce fails ID token validation', async () => {
    const { callback, transaction } = await signIn(viaUserInfo, rp, 'ada');
    const err = await refused(rp.finish(callback, { ...transaction, nonce: (await rp.start()).transaction.nonce }), 'id_token_invalid');
    assert.match(err.message, /nonce/);
  });

  test('the user cancelling at the provider becomes a provider_error with access_denied', async () => {
    const { url, transaction } = await rp.start();
    const callback = await viaUserInfo.authorize(url, { abort: true });
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    const err = await refused(rp.finish(callback, transaction), 'provider_error');
    assert.equal(err.providerError, 'access_denied');
    assert.match(err.message, /access_denied/);
  });

  test('a callback from a different provider (mix-up) is refused', async () => {
    const { url, transaction } = await rp.start();
    // The same request replayed at the other provider: same client, same state, but its `iss`.
    const elsewhere = new URL(url);
    const callback = await viaIdToken.authorize(new URL(elsewhere.pathname + elsewhere.search, viaIdToken.issuer).href, { login: 'ada' });
    assert.equal(callback.searchParams.get('iss'), viaIdToken.issuer);
    await refused(rp.finish(callback, transaction), 'invalid_response');
  });
});

describe('discovery', () => {
  test('an unreachable issuer fails with a discovery error', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}`;
    await refused(OidcClient.discover({ ...client, issuer, allowHttp: true }), 'discovery');
  });

  test('a plain-http issuer is refused unless allowHttp is set', async () => {
    await refused(OidcClient.discover({ ...client, issuer: viaUserInfo.issuer }), 'discovery');
  });
});
