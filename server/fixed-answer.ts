// A JSON body fixed for as long as the snapshot and the plans are (/v1/categories, /v1/cities, the
// OpenAPI document): answered like every other 200 of the API, with a strong ETag, Vary:
// Accept-Encoding, a 304 to a client that holds it, and gzip or brotli forms compressed once (the
// OpenAPI document: 195 KB with the 50k bench set's cities, 8.6 KB as brotli). Before this, these three were the only 200s
// without any of it (issue 30, item 5).
import { bodyTag } from '../query/etag.ts';
import { compress, encodingFor, negotiate } from './compress.ts';
import { etagValue, noneMatchHits } from './conditional.ts';
import type { Reply, Request } from './http.ts';
import { JSON_TYPE } from './reply.ts';

export class FixedAnswer {
  readonly body: Buffer;
  readonly tag: string;
  private readonly forms = new Map<'gzip' | 'br', Promise<Buffer>>();

  constructor(body: Buffer) {
    this.body = body;
    this.tag = bodyTag(body);
  }

  /** The 200 (in the encoding the request accepts best) or the 304 the request gets. */
  reply(req: Request, cacheControl: string, route: string): Reply | Promise<Reply> {
    const enc = encodingFor(negotiate(req.headers['accept-encoding']), this.body.length);
    const headers: [string, string][] = [
      ['ETag', etagValue(this.tag, enc)],
      ['Cache-Control', cacheControl],
      ['Vary', 'Accept-Encoding'],
    ];
    if (noneMatchHits(req.headers['if-none-match'], this.tag)) return { status: 304, headers, body: '', route };
    const ok = (body: Uint8Array): Reply => ({
      status: 200,
      headers: [['Content-Type', JSON_TYPE], ...(enc === 'identity' ? [] : [['Content-Encoding', enc] as [string, string]]), ...headers],
      body,
      route,
    });
    if (enc === 'identity') return ok(this.body);
    let form = this.forms.get(enc);
    if (form === undefined) {
      form = compress(this.body, enc);
      // A failed compression is not kept: the next request tries again.
      form.catch(() => this.forms.delete(enc));
      this.forms.set(enc, form);
    }
    return form.then(ok);
  }
}
