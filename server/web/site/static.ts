// The website's own files (server/web/static): read and compressed once at start, served from memory.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../../../core/config.ts';
import { bodyTag } from '../../../query/etag.ts';
import type { Kept } from './context.ts';

const STATIC_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** server/web/static, read and compressed once: a few small files, served from memory with their own ETags. */
export function loadStatic(): ReadonlyMap<string, Kept & { readonly type: string }> {
  const dir = path.join(REPO_ROOT, 'server', 'web', 'static');
  const out = new Map<string, Kept & { readonly type: string }>();
  for (const name of ['site.css', 'site.js', 'favicon.svg']) {
    const body = readFileSync(path.join(dir, name));
    const forms = { gzip: gzipSync(body), br: brotliCompressSync(body) };
    out.set(`/static/${name}`, {
      type: STATIC_TYPES[path.extname(name)] ?? 'application/octet-stream',
      body,
      etag: bodyTag(body),
      encoded: (enc) => forms[enc],
    });
  }
  return out;
}
