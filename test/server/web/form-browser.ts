// A browser as the account tests drive the website over plain HTTP: cookies kept by name (the
// server's are host-only, Path=/), Origin sent on form POSTs, a client address of its own as a
// trusted proxy reports it (servers started with TRUST_PROXY), and each answer's bytes and round
// trip. Pages are read by htmlparser2, not by regular expressions over our own markup.
import assert from 'node:assert/strict';
import { parse as parseCookie } from 'cookie';
import { DomUtils, parseDocument } from 'htmlparser2';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
  readonly text: string;
  /** The round trip, request sent to body read, ms. */
  readonly ms: number;
}

let clients = 0;
/** A client address no other browser of this process has (TEST-NET-style, never routed). */
export const nextClientAddress = (): string => {
  clients++;
  return `10.${(clients >> 16) & 255}.${(clients >> 8) & 255}.${clients & 255}`;
};

export class FormBrowser {
  readonly jar = new Map<string, string>();

  /** Where requests go; a test may move it between servers, as a load balancer would. */
  base: string;
  /** The website's origin, which our forms' POSTs carry. */
  private readonly origin: string;
  /**
   * The client address a trusted proxy reports: by default one of its own, so that the
   * per-address sign-in limit is met only where a test means to.
   */
  private readonly forwardedFor: string;
  constructor(base: string, origin: string, forwardedFor = nextClientAddress()) {
    this.base = base;
    this.origin = origin;
    this.forwardedFor = forwardedFor;
  }

  /** `origin: null` leaves Origin out of a POST; a string sends that one instead of ours. */
  async request(p: string, init: { method?: string; form?: Record<string, string>; origin?: string | null } = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.forwardedFor };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
      if (init.origin !== null) headers.origin = init.origin ?? this.origin;
    }
    const t0 = process.hrtime.bigint();
    const res = await fetch(this.base + p, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    for (const line of res.headers.getSetCookie()) {
      const [name, value] = Object.entries(parseCookie(line.split(';')[0] ?? ''))[0] ?? [];
      if (name === undefined) continue;
      if (!value || /max-age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, headers: res.headers, body: bytes, text: bytes.toString('utf8'), ms };
  }

  get = (p: string): Promise<Answer> => this.request(p);
  post = (p: string, fields: Record<string, string>, origin?: string | null): Promise<Answer> =>
    this.request(p, { form: fields, ...(origin === undefined ? {} : { origin }) });
}

type Element = ReturnType<typeof DomUtils.findAll>[number];

/** Every POST form of a page: its action and its hidden fields, in document order. */
export function postForms(page: string): { action: string; fields: Record<string, string> }[] {
  return DomUtils.findAll((e) => e.name === 'form' && e.attribs.method === 'post', parseDocument(page).children).map((f: Element) => {
    const fields: Record<string, string> = {};
    for (const i of DomUtils.findAll((e) => e.name === 'input' && e.attribs.type === 'hidden', f.children))
      fields[i.attribs.name ?? ''] = i.attribs.value ?? '';
    return { action: f.attribs.action ?? '', fields };
  });
}

/** The hidden fields of the page's `nth` form posting to `action`; the test fails when there is none. */
export function hiddenFields(page: string, action: string, nth = 0): Record<string, string> {
  const f = postForms(page).filter((x) => x.action === action)[nth];
  assert.ok(f, `no form posting to ${action}`);
  return f.fields;
}
