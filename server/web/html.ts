// HTML that escapes by default. Every value interpolated into an `html` template is escaped
// (escape-html: & < > " ') unless it is itself `Html` — the result of another `html` template or of
// `trusted()`, which exists for the few strings we build ourselves (inline SVG, the JSON-LD block).
// Templates must quote their attribute values; a URL taken from upstream data goes through
// `httpUrl()` first so that no javascript: or data: link reaches an href or src.
import escapeHtml from 'escape-html';

const TRUSTED: unique symbol = Symbol('trusted html');

export interface Html {
  readonly [TRUSTED]: true;
  readonly text: string;
}

/** Anything a template accepts: nothing, text, numbers, trusted HTML, or lists of these. */
export type Value = Html | string | number | boolean | null | undefined | readonly Value[];

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && (v as Partial<Html>)[TRUSTED] === true;

/** Marks a string as HTML we wrote ourselves. Never call it on data from a feed or a request. */
export function trusted(text: string): Html {
  return { [TRUSTED]: true, text };
}

function render(v: Value): string {
  if (v === null || v === undefined || v === false || v === true) return '';
  if (typeof v === 'string') return escapeHtml(v);
  if (typeof v === 'number') return escapeHtml(String(v));
  if (isHtml(v)) return v.text;
  let out = '';
  for (const item of v) out += render(item);
  return out;
}

/** The template tag: literal parts as written, every value escaped unless it is Html. */
export function html(strings: TemplateStringsArray, ...values: readonly Value[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return trusted(out);
}

/**
 * A value for `<script type="application/ld+json">`: JSON in which `<`, `>` and `&` (and the two
 * line separators JavaScript once choked on) are \u escapes, so no string inside it can close the
 * script element or open a comment, whatever an upstream title holds.
 */
export function jsonScript(value: unknown): Html {
  const json = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return trusted(json);
}

/** An upstream URL fit for an href or src: absolute http(s) only, else null. */
export function httpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
