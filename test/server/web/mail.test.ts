// The mailer both ways: to the outbox (an .eml file a developer opens) and over SMTP to a real
// server on loopback (smtp-server). Each message is read back by mailparser, not by us; the log says
// a mail went out and never carries its text (a sign-in link is a credential).
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createLogger } from '../../../server/log.ts';
import { createMailer, OUTBOX_DIR } from '../../../server/web/mail.ts';

const SECRET = 'https://web.example/account/confirm?token=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA';
const MAIL = {
  to: 'Ada Lovelace <ada@example.org>',
  subject: 'Your sign-in link – Family Events ✓',
  text: `Open this link to sign in:\n\n${SECRET}\n\nIt works once, for 15 minutes.`,
  kind: 'sign_in',
};

function capture(): { log: ReturnType<typeof createLogger>['logger']; lines: () => string } {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { log: createLogger('info', stream).logger, lines: () => out };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fe-mail-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('without SMTP_URL: the outbox', () => {
  test('one .eml per message, RFC 5322 with CRLF, readable only by the owner; the log names the file, not the link', async () => {
    const { log, lines } = capture();
    const mailer = createMailer({ smtpUrl: null, from: 'Family Events <no-reply@web.example>', dataDir: dir, log });
    await mailer.send(MAIL);
    await mailer.send({ ...MAIL, to: 'bob@example.org' });
    mailer.close();
    const files = (await readdir(path.join(dir, OUTBOX_DIR))).sort();
    assert.equal(files.length, 2);
    for (const f of files) assert.match(f, /\.eml$/);
    const raw = await readFile(path.join(dir, OUTBOX_DIR, files[0]!));
    assert.ok(!/(?<!\r)\n/.test(raw.toString('latin1')), 'CRLF line ends only');
    assert.equal((await stat(path.join(dir, OUTBOX_DIR, files[0]!))).mode & 0o777, 0o600);
    const parsed = await simpleParser(raw);
    assert.equal(parsed.subject, MAIL.subject);
    assert.equal(parsed.from?.value[0]?.address, 'no-reply@web.example');
    const to = Array.isArray(parsed.to) ? parsed.to[0] : parsed.to;
    assert.equal(to?.value[0]?.address, 'ada@example.org');
    assert.equal(parsed.text?.trim(), MAIL.text.trim());
    assert.ok(parsed.messageId, 'a Message-ID');
    assert.ok(parsed.date, 'a Date');
    await new Promise((r) => setTimeout(r, 50));
    assert.match(lines(), /mail written to the outbox/);
    assert.ok(!lines().includes('token=') && !lines().includes('Zm9vYmFy'), 'the log never holds the link');
  });
});

describe('with SMTP_URL: a real SMTP server on loopback', () => {
  test('the message arrives, addressed as sent; the log has its Message-ID, not the link', async () => {
    const received: Buffer[] = [];
    const envelopes: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        const parts: Buffer[] = [];
        stream.on('data', (c: Buffer) => parts.push(c));
        stream.on('end', () => {
          received.push(Buffer.concat(parts));
          envelopes.push(...session.envelope.rcptTo.map((r) => r.address));
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.server.address() as { port: number }).port;
    try {
      const { log, lines } = capture();
      const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Family Events <no-reply@web.example>', dataDir: dir, log });
      await mailer.send(MAIL);
      mailer.close();
      assert.deepEqual(envelopes, ['ada@example.org']);
      const parsed = await simpleParser(received[0]!);
      assert.equal(parsed.subject, MAIL.subject);
      assert.equal(parsed.text?.trim(), MAIL.text.trim());
      await new Promise((r) => setTimeout(r, 50));
      assert.match(lines(), /mail sent/);
      assert.ok(!lines().includes('token='), 'the log never holds the link');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
