// A query string as the server reads it, for the API's dispatcher (server/app.ts) and the website's
// pages alike: split into name → value with its problems as a problem's errors[], and valibot's
// issues in the same shape. Its own module so that the website does not import the dispatcher.
import type * as v from 'valibot';
import type { ParamError } from './errors.ts';

/** Splits a query string into name → value, refusing duplicates and broken percent-encoding. */
export function parseQuery(raw: string): { values: Record<string, string>; errors: ParamError[] } {
  const values: Record<string, string> = {};
  const errors: ParamError[] = [];
  if (raw === '') return { values, errors };
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replaceAll('+', ' '));
      value = decodeURIComponent(rawValue.replaceAll('+', ' '));
    } catch {
      errors.push({ param: rawName.slice(0, 100), message: 'is not valid percent-encoding (encode the value as UTF-8, e.g. %C3%A9 for é)' });
      continue;
    }
    if (Object.hasOwn(values, name)) {
      if (!errors.some((e) => e.param === name)) errors.push({ param: name, message: 'is given more than once; give it once (lists are comma-separated)' });
      continue;
    }
    values[name] = value;
  }
  return { values, errors };
}

/** valibot's issues as the problem's errors[]: one per parameter, the first message for it. */
export function issuesToErrors(issues: readonly v.BaseIssue<unknown>[]): ParamError[] {
  const out: ParamError[] = [];
  for (const issue of issues) {
    const key = issue.path?.[0]?.key;
    const param = typeof key === 'string' ? key : 'query';
    if (!out.some((e) => e.param === param)) out.push({ param, message: issue.message });
  }
  return out;
}
