// Sign-in and invitation mail, written by nodemailer: over SMTP_URL in production, or, without it
// (development and tests), as one RFC 5322 .eml file per message in DATA_DIR/outbox, which a
// developer opens to follow the link. The log says that a mail went out and where; never its
// body, which holds a sign-in link.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../log.ts';

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
  /** For the log line: what kind of mail this is (sign_in, invite). */
  readonly kind: string;
}

export interface Mailer {
  /** Resolves once the message is handed to the SMTP server or written to the outbox. */
  send(mail: Mail): Promise<void>;
  close(): void;
}

export const OUTBOX_DIR = 'outbox';

export function createMailer(opts: { readonly smtpUrl: string | null; readonly from: string; readonly dataDir: string; readonly log: Logger }): Mailer {
  if (opts.smtpUrl !== null) {
    const transport = nodemailer.createTransport(opts.smtpUrl);
    return {
      async send(mail) {
        const info = await transport.sendMail({
          from: opts.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          ...(mail.html ? { html: mail.html } : {}),
        });
        opts.log.info({ mail: mail.kind, message_id: info.messageId }, 'mail sent');
      },
      close: () => transport.close(),
    };
  }
  // streamTransport builds the exact message an SMTP server would receive, CRLF line ends included.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const outbox = path.join(opts.dataDir, OUTBOX_DIR);
  return {
    async send(mail) {
      const info = await transport.sendMail({
        from: opts.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html ? { html: mail.html } : {}),
      });
      await mkdir(outbox, { recursive: true });
      // Sortable by time, unique without coordination.
      const file = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
      await writeFile(path.join(outbox, file), info.message as Buffer, { mode: 0o600 });
      opts.log.info({ mail: mail.kind, file: path.join(OUTBOX_DIR, file) }, 'mail written to the outbox (SMTP_URL is not set)');
    },
    close: () => transport.close(),
  };
}
