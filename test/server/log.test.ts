// The server's log (server/log.ts) never writes a secret, even one handed to it by mistake: a key,
// a token or key in a logged URL or path, a bearer credential, the website's cookies, in the
// message, a field, a nested object or an Error. Real pino, its output read back.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createLogger, scrubSecrets } from '../../server/log.ts';

const KEY = `bsc_live_${'Ab3'.repeat(14)}`;
const TOKEN = 'tOk3n-_Secret42xyz';
const SESSION = 'SeSsIoN0123456789abcdef';

function capture(): { log: ReturnType<typeof createLogger>['logger']; text: () => string } {
  let out = '';
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { log: createLogger('info', stream).logger, text: () => out };
}

test('keys, tokens, bearer credentials and session cookies never reach the output', () => {
  const { log, text } = capture();
  log.error({ path: `/account/confirm?token=${TOKEN}`, url: `https://web.example/account/invite?x=1&token=${TOKEN}` }, 'website page failed');
  log.warn({ err: new Error(`GET https://api.example/v1/events?api_key=${KEY}&limit=2 failed`) }, 'upstream failed');
  log.info({ headers: { authorization: `Bearer ${KEY}`, cookie: `__Host-fe_session=${SESSION}; fe_pre=${SESSION}` } }, 'headers');
  log.info({ nested: { list: [`Authorization: Bearer ${KEY}`, { cookie_header: `fe_session=${SESSION}` }] } }, 'nested');
  log.info({ token: TOKEN, api_key: KEY }, `sign-in link https://web.example/account/confirm?token=${TOKEN} for key ${KEY}`);
  // A field named for a secret, at any depth, whatever its value looks like.
  log.info({ link: { kind: 'sign_in', token: 'plainLookingValue1' }, Cookie: 'x' }, 'by name');
  const out = text();
  assert.equal(out.trim().split('\n').length, 6, out);
  assert.ok(!out.includes('plainLookingValue1'), out);
  assert.match(out, /"token":"\[redacted\]"/);
  for (const secret of [KEY, TOKEN, SESSION]) assert.ok(!out.includes(secret), `${secret} is in the log:\n${out}`);
  // What was there is still said.
  assert.match(out, /token=…/);
  assert.match(out, /api_key=…/);
  assert.match(out, /fe_session=…/);
  assert.match(out, /website page failed/);
});

test('a line without secrets is written as given', () => {
  const { log, text } = capture();
  log.info({ method: 'GET', route: '/v1/events', status: 200, bytes: 1083, ms: 1.2, cache: 'hit', key_id: 'k_123' }, 'request');
  const line = JSON.parse(text()) as Record<string, unknown>;
  assert.deepEqual(
    { ...line, time: 0 },
    { level: 30, time: 0, method: 'GET', route: '/v1/events', status: 200, bytes: 1083, ms: 1.2, cache: 'hit', key_id: 'k_123', msg: 'request' },
  );
  // Only a parameter named for a secret: monkey= is not key=.
  assert.equal(scrubSecrets('/events?city=Berkeley&monkey=1&turkey=2'), '/events?city=Berkeley&monkey=1&turkey=2');
  assert.equal(scrubSecrets('/x?a=1&key=2'), '/x?a=1&key=…');
});
