// The website's signing key (its CSRF tokens and signed cookies), kept beside the accounts store:
// every server on an embedded ledger reads the same file. On the shared ledger the first node to
// reach PostgreSQL seeds the cluster's key with its file's (sql/postgres/0002_web_secret.sql), and
// every node then signs with that one, whatever its own LEDGER_DIR holds.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SECRET_FILE = 'web-secret';

/** LEDGER_DIR/web-secret, made once (32 random bytes, mode 600), read at start-up. */
export function loadSecret(ledgerDir: string): Buffer {
  const file = path.join(ledgerDir, SECRET_FILE);
  if (!existsSync(file)) {
    mkdirSync(ledgerDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another server made it first: read theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
}
