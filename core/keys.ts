// API keys: `bsc_live_` and 40 base62 characters from the CSPRNG (238 bits). Only the SHA-256 of a
// key is stored and looked up: a lookup by digest tells a caller nothing about how close a guess
// came to a stored key, which comparing key strings could.
import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'bsc_live_';
const SECRET_LENGTH = 40;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** What a presented key must look like before it is worth hashing. */
export const KEY_FORMAT = /^bsc_live_[0-9A-Za-z]{32,128}$/;

/** Uniform base62: bytes ≥ 248 (= 4·62) are dropped rather than folded, which would bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function newKey(): string {
  return KEY_PREFIX + randomBase62(SECRET_LENGTH);
}

/** Hashed on every keyed request: the one-shot crypto.hash, a third of createHash's cost (no Hash object). */
export function keyHash(key: string): string {
  return hash('sha256', key, 'hex');
}

/** How an operator tells keys apart without the key: its last four characters. */
export function keyHint(key: string): string {
  return `${KEY_PREFIX}…${key.slice(-4)}`;
}

export const newId = (prefix: 'org' | 'key' | 'usr' | 'ses'): string => `${prefix}_${randomBase62(16)}`;

/** An opaque bearer token for the website (sign-in links, sessions): 256 bits, base64url. Stored as keyHash(token). */
export const newToken = (): string => randomBytes(32).toString('base64url');
