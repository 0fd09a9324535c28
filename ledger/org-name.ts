// An organization's name as an owner may set it (issue 28 item 12): the ledger refuses any other,
// and the website says why before asking. Names are shown on pages, in /v1/usage and in the
// command line's listings, so nothing in one may move text around or hide: no control characters,
// no bidirectional overrides, no line or paragraph separators.

/** At most this many characters (code points), after trimming. */
export const ORG_NAME_MAX_CHARS = 100;

// C0/C1 controls (\p{Cc}), the bidirectional embeddings, overrides and isolates, and the line and
// paragraph separators: each can make a name read as something it is not.
const FORBIDDEN = /[\p{Cc}\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029]/u;

export type OrgNameProblem = 'empty' | 'too_long' | 'control';

/** The name as stored (NFC, trimmed), or why it cannot be one. */
export function orgName(raw: string): { readonly ok: true; readonly name: string } | { readonly ok: false; readonly problem: OrgNameProblem } {
  const name = raw.normalize('NFC').trim();
  if (name === '') return { ok: false, problem: 'empty' };
  if (FORBIDDEN.test(name)) return { ok: false, problem: 'control' };
  if ([...name].length > ORG_NAME_MAX_CHARS) return { ok: false, problem: 'too_long' };
  return { ok: true, name };
}
