// Work started after an answer (server/after-answer.ts): it runs after the answer's turn, stop()
// waits for it, and a real server stopped right after a sign-in answer has sent the mail by the
// time its stop resolves (before, it could be lost, or written into a DATA_DIR being removed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { AfterAnswer } from '../../server/after-answer.ts';
import { sampleFixture, startTestServer, WEB } from './helpers.ts';
import { FormBrowser, hiddenFields } from './web/form-browser.ts';

/** Longer than a stop takes without waiting (pool and ledger close in well under a second), far shorter than its drain limit. */
const SMTP_DELAY_MS = 1_500;

test('work runs after the current turn, and settle waits for it', async () => {
  const errors: unknown[] = [];
  const later = new AfterAnswer((err) => errors.push(err));
  const order: string[] = [];
  later.run(async () => {
    order.push('work starts');
    await new Promise((r) => setTimeout(r, 50));
    order.push('work ends');
  });
  order.push('answer');
  later.run(() => Promise.reject(new Error('no mail server')));
  assert.equal(await later.settle(5_000), 0);
  assert.deepEqual(order, ['answer', 'work starts', 'work ends']);
  assert.equal(errors.length, 1);
  assert.match((errors[0] as Error).message, /no mail server/);
});

test('settle gives up after its timeout and says how much is still running', async () => {
  const later = new AfterAnswer(() => {});
  let release = (): void => {};
  later.run(() => new Promise<void>((r) => (release = r)));
  const t0 = Date.now();
  assert.equal(await later.settle(100), 1);
  assert.ok(Date.now() - t0 >= 90);
  release();
  assert.equal(await later.settle(5_000), 0);
});

test('a server stopped right after a sign-in answer has mailed the link when stop() resolves', async () => {
  // A real SMTP server that takes its time over each message, as a remote one may.
  const received: string[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, done) {
      stream.resume();
      stream.on('end', () =>
        setTimeout(() => {
          received.push(...session.envelope.rcptTo.map((r) => r.address));
          done();
        }, SMTP_DELAY_MS),
      );
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const fx = await sampleFixture();
  try {
    const port = (smtp.server.address() as { port: number }).port;
    const srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true', SMTP_URL: `smtp://127.0.0.1:${port}` });
    let stopped = false;
    try {
      const b = new FormBrowser(srv.base, WEB);
      const page = await b.get('/account/sign-in');
      const r = await b.post('/account/sign-in', { ...hiddenFields(page.text, '/account/sign-in'), email: 'deploy-time@example.org' });
      assert.equal(r.status, 303);
      assert.deepEqual(received, [], 'the mail goes after the answer');
      await srv.stop();
      stopped = true;
      assert.deepEqual(received, ['deploy-time@example.org'], 'the mail was accepted before stop() resolved');
    } finally {
      if (!stopped) await srv.stop();
    }
  } finally {
    await fx.cleanup();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  }
});
