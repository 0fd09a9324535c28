// DATA_DIR/outbox as the account tests read it: the .eml files a server without SMTP_URL writes,
// each parsed by mailparser (not by regular expressions over our own mail) for its recipient and
// the first link of its text. A file the server is still writing reads as not there yet.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { simpleParser } from 'mailparser';

export interface Mail {
  readonly file: string;
  readonly to: string;
  readonly link: string;
  /** The message as the server wrote it. */
  readonly raw: string;
}

export class Outbox {
  readonly dir: string;
  private readonly parsed = new Map<string, Mail>();

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'outbox');
  }

  /** The mails' file names, oldest first ([] before the first mail). */
  async names(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((f) => f.endsWith('.eml')).sort();
    } catch {
      return [];
    }
  }

  /** A mail, or null while it is incomplete (no recipient or no link yet). Whole mails are remembered. */
  async read(file: string): Promise<Mail | null> {
    const known = this.parsed.get(file);
    if (known) return known;
    const raw = await readFile(path.join(this.dir, file), 'utf8');
    const mail = await simpleParser(raw);
    const to = mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : undefined;
    const link = /https?:\/\/\S+/.exec(mail.text ?? '')?.[0];
    if (!to || !link) return null;
    const whole = { file, to, link, raw };
    this.parsed.set(file, whole);
    return whole;
  }

  /**
   * The first whole mail, oldest first, among the files not in `seen` that `match` accepts; the
   * test fails when none has arrived within `waitMs`.
   */
  async next(seen: Iterable<string>, waitMs: number, match: (m: Mail) => boolean = () => true): Promise<Mail> {
    const skip = new Set(seen);
    const deadline = Date.now() + waitMs;
    for (;;) {
      for (const f of (await this.names()).filter((n) => !skip.has(n))) {
        const mail = await this.read(f);
        if (mail === null) break; // still being written: it, and what follows it, on the next round
        if (match(mail)) return mail;
      }
      assert.ok(Date.now() < deadline, `no such mail reached ${this.dir} within ${waitMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
