// The website's own files (server/web/static): read and compressed once at start, served from memory.
// Pages link each under a name that carries a hash of its bytes (/static/site.<hash>.css), cached
// for a year as immutable: a browser never asks again, and a deploy that changes a file changes its
// name, so no one sees new pages with old CSS. The plain names (/static/site.css) keep answering,
// with the short cache, for pages a browser or proxy kept from before, and so does a hashed name
// of another deploy (a page cached across a deploy): it gets today's bytes, never as immutable.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { REPO_ROOT } from '../../../core/config.ts';
import { bodyTag } from '../../../query/etag.ts';
import type { SiteAssets } from '../layout.ts';
import type { Kept } from './context.ts';

const STATIC_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Hex digits of SHA-256 in a hashed name: 64 bits, so two versions of a file never share one. */
const HASH_CHARS = 16;
/** A hashed name of one of our files, of this deploy or another: site.<hash>.css → site.css. */
const HASHED_NAME = new RegExp(`^/static/([a-z]+)\\.[0-9a-f]{${HASH_CHARS}}(\\.[a-z]+)$`);

export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface StaticFile extends Kept {
  readonly type: string;
  /** Served under its content-hashed name: the bytes at this URL never change. */
  readonly immutable: boolean;
}

export interface StaticFiles {
  /** The file a path names, hashed or plain, or undefined when it names none. */
  lookup(urlPath: string): StaticFile | undefined;
  /** The hashed URLs pages link. */
  readonly assets: SiteAssets;
}

/** `site.css` with the hash of `body`: `site.<hash>.css`, the name the test checks against the bytes. */
export function hashedName(name: string, body: Uint8Array): string {
  const ext = path.extname(name);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, HASH_CHARS);
  return `${name.slice(0, -ext.length)}.${hash}${ext}`;
}

/** server/web/static, read and compressed once: a few small files, served from memory with their own ETags. */
export function loadStatic(): StaticFiles {
  const dir = path.join(REPO_ROOT, 'server', 'web', 'static');
  const byPath = new Map<string, StaticFile>();
  const urls = new Map<string, string>();
  for (const name of ['site.css', 'site.js', 'favicon.svg']) {
    const body = readFileSync(path.join(dir, name));
    const forms = { gzip: gzipSync(body), br: brotliCompressSync(body) };
    const file = {
      type: STATIC_TYPES[path.extname(name)] ?? 'application/octet-stream',
      body,
      etag: bodyTag(body),
      encoded: (enc: 'gzip' | 'br') => forms[enc],
    };
    const hashed = `/static/${hashedName(name, body)}`;
    byPath.set(`/static/${name}`, { ...file, immutable: false });
    byPath.set(hashed, { ...file, immutable: true });
    urls.set(name, hashed);
  }
  const url = (name: string): string => urls.get(name) as string;
  return {
    lookup: (urlPath) => {
      const found = byPath.get(urlPath);
      if (found) return found;
      const m = HASHED_NAME.exec(urlPath);
      return m ? byPath.get(`/static/${m[1] ?? ''}${m[2] ?? ''}`) : undefined;
    },
    assets: { css: url('site.css'), js: url('site.js'), icon: url('favicon.svg') },
  };
}
