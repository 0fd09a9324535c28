// The mailbox an address reaches, for counting what we send to it (the mail limit): `a+1@x` and
// `a+2@x` are one person, as are `A.B@gmail.com` and `ab@googlemail.com`. Only for counting: mail
// still goes to the address as it was given, and accounts keep it as given.
//
// Folding more than a provider does only makes two people share a limit, which costs them a wait;
// folding less lets one person multiply it. So the rules lean towards folding:
// - case, everywhere (RFC 5321 lets a local part be case-sensitive; no provider people use is);
// - `+tag`, for every domain: most providers deliver it to the untagged mailbox, and we cannot
//   tell which do (a custom domain's server decides);
// - dots in the local part, and googlemail.com, for Gmail only: the one large provider that
//   ignores them (elsewhere `a.b@` and `ab@` are different people);
// - an internationalized domain, in its ASCII (punycode) form, and without a trailing dot.
// Written here rather than taken from a package: validator's normalizeEmail folds `+tag` only for
// a list of providers, and the small ones on npm fold Gmail alone; the rules above are six lines.
import { domainToASCII } from 'node:url';

const GMAIL = new Set(['gmail.com', 'googlemail.com']);

/** The folded form of an e-mail address: the key its mail limit is counted under. */
export function mailboxOf(address: string): string {
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf('@');
  if (at <= 0) return a;
  let local = a.slice(0, at);
  let rawDomain = a.slice(at + 1);
  while (rawDomain.endsWith('.')) rawDomain = rawDomain.slice(0, -1);
  let domain = domainToASCII(rawDomain) || rawDomain;
  const plus = local.indexOf('+');
  // A local part that is all tag ("+x@") has nothing to fold onto: it stays as it is.
  if (plus > 0) local = local.slice(0, plus);
  if (GMAIL.has(domain)) {
    domain = 'gmail.com';
    local = local.replaceAll('.', '');
  }
  return `${local}@${domain}`;
}
