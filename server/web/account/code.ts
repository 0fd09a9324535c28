// The one-time code a sign-in mail carries beside its link (issue 28 item 15): for the person who
// asked on one device (a laptop) and reads their mail on another (a phone). Typed on the "Check
// your mail" page of the browser that asked, it signs that browser in, as the link would there.
//
// The code is derived from the link's token (an HMAC keyed by the token), not drawn apart: whoever
// holds the link holds the mail, and so the code; the page a link opens in another browser can
// show it without telling its reader anything the mail did not. The ledger keeps neither: only a
// slow, salted hash (scrypt) of the code, as a short code's fast hash could be reversed by trying
// them all, and the link's token only as its SHA-256.
import { createHmac, randomBytes, scrypt } from 'node:crypto';

/** No 0/O, 1/I/L or U/V look-alikes to mistype (29 symbols). */
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTWXYZ';
const LENGTH = 8;

/**
 * The code of a sign-in link's token, as the mail shows it: "K7QM-3XPD". 8 symbols of 29, about
 * 2^39; ledger/codes.ts says why that, with its 5 wrong tries, is enough.
 */
export function codeOf(token: string): string {
  const mac = createHmac('sha256', token).update('family-events sign-in code').digest();
  // 64 bits taken modulo 29^8 (about 5e11): the skew is below one part in 3e7.
  let n = mac.readBigUInt64BE(0);
  let out = '';
  for (let i = 0; i < LENGTH; i++) {
    out += ALPHABET[Number(n % BigInt(ALPHABET.length))];
    n /= BigInt(ALPHABET.length);
  }
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

/** A code that cannot be any link's: hashed when no link was issued, so the work does not tell. */
export const noCode = (): string => codeOf(randomBytes(32).toString('base64url'));

/**
 * A typed code as the mail shows it, whatever its case, spaces or dashes; null when it is not one.
 */
export function typedCode(input: string): string | null {
  const plain = input.toUpperCase().replace(/[\s\-–.]/g, '');
  if (plain.length !== LENGTH || [...plain].some((c) => !ALPHABET.includes(c))) return null;
  return `${plain.slice(0, 4)}-${plain.slice(4)}`;
}

// scrypt at N=2^14 (16 MiB, some tens of milliseconds, off the event loop): trying every code
// against one stolen hash takes thousands of CPU-years; it runs once per mail and per typed code.
const SCRYPT = { N: 1 << 14, r: 8, p: 1, maxmem: 64 << 20 };

/** The hash the ledger keeps of a code, salted with the binding of the browser that asked. */
export function codeHash(code: string, bindingHash: string): Promise<string> {
  return new Promise((resolve, reject) => {
    scrypt(code, `sign-in code\0${bindingHash}`, 32, SCRYPT, (err, key) => (err ? reject(err) : resolve(key.toString('hex'))));
  });
}
