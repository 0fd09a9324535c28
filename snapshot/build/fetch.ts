// Fetching one source, isolated: a timeout on the whole exchange, a byte cap read as the body
// streams, retries with backoff on transient failures only, conditional GET against the last good
// copy, and charset decoding from the response (or the document's own declaration).
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pRetry, { AbortError } from 'p-retry';
import iconv from 'iconv-lite';
import { fetch } from 'undici';

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;

export interface Fetched {
  readonly text: string;
  readonly bytes: number;
  readonly notModified: boolean;
}

export interface FetchOptions {
  readonly cacheDir: string;
  readonly sourceId: string;
  readonly timeoutMs?: number | undefined;
  readonly maxBytes?: number | undefined;
  readonly retries?: number | undefined;
  /** Base of the backoff in ms (doubles per attempt). Tests shorten it. */
  readonly backoffMs?: number | undefined;
}

/** The knobs a build may turn for every source (tests shorten them). */
export type FetchTuning = Partial<Pick<FetchOptions, 'timeoutMs' | 'retries' | 'backoffMs'>>;

export class FetchError extends Error {}

interface CacheMeta {
  /** The address the cached body came from: validators are only valid for it. */
  url?: string;
  etag?: string;
  lastModified?: string;
  charset?: string;
}

// iconv-lite for legacy charsets: Node 20's TextDecoder decodes 'windows-1252' as plain ISO-8859-1
// (nodejs/node#56542), turning the curly quotes, dashes and € of Windows-exported feeds into C1
// control characters. UTF-8 stays on TextDecoder (fatal mode is how we detect it).
function decodeLegacy(buf: Uint8Array, label: string): string | null {
  const l = label.toLowerCase();
  // Publishers who say latin1 almost always mean windows-1252 (the WHATWG encoding standard maps them so).
  const name = l === 'iso-8859-1' || l === 'latin1' || l === 'us-ascii' || l === 'ascii' ? 'windows-1252' : l;
  return iconv.encodingExists(name) ? iconv.decode(Buffer.from(buf), name) : null;
}

/** Decodes bytes by the declared charset (header, XML prolog, HTML meta), else UTF-8, else Windows-1252. */
export function decode(buf: Uint8Array, headerCharset: string | null): string {
  const head = Buffer.from(buf.subarray(0, 1024)).toString('latin1');
  const declared =
    headerCharset ??
    /<\?xml[^>]{0,200}encoding=["']([\w.:-]{1,40})["']/i.exec(head)?.[1] ??
    /<meta[^>]{0,200}charset=["']?([\w.:-]{1,40})/i.exec(head)?.[1] ??
    null;
  if (declared && !/^utf-?8$/i.test(declared)) {
    const text = decodeLegacy(buf, declared);
    if (text !== null) return text;
    // An unknown label falls through to detection.
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return decodeLegacy(buf, 'windows-1252')!;
  }
}

function charsetOf(contentType: string | null): string | null {
  return contentType ? (/charset=["']?([\w.:-]{1,40})/i.exec(contentType)?.[1] ?? null) : null;
}

async function readCapped(body: AsyncIterable<Uint8Array> | null, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  if (body) {
    for await (const chunk of body) {
      n += chunk.byteLength;
      if (n > max) throw new AbortError(new FetchError(`body exceeds the ${max}-byte limit`));
      chunks.push(Buffer.from(chunk));
    }
  }
  return Buffer.concat(chunks, n);
}

async function readLocal(file: string, max: number): Promise<Fetched> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile()) throw new FetchError(`no such file: ${file}`);
  if (st.size > max) throw new FetchError(`file exceeds the ${max}-byte limit`);
  const buf = await readFile(file);
  return { text: decode(buf, null), bytes: buf.byteLength, notModified: false };
}

async function writeAtomic(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}

/** A source's address: http(s) is fetched, anything else is a local file path. */
export async function fetchSource(location: string, opts: FetchOptions): Promise<Fetched> {
  const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!/^https?:\/\//i.test(location)) return readLocal(location, max);

  const dir = path.join(opts.cacheDir, opts.sourceId);
  const metaFile = path.join(dir, 'meta.json');
  const bodyFile = path.join(dir, 'body');
  const stored: CacheMeta = await readFile(metaFile, 'utf8').then(
    (s) => JSON.parse(s) as CacheMeta,
    () => ({}),
  );
  // A source whose registry address changed starts afresh: the old address's validators and body say nothing about the new one.
  const meta: CacheMeta = stored.url === location ? stored : {};
  const cached = stored.url === location ? await readFile(bodyFile).catch(() => null) : null;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  const attempt = async (): Promise<Fetched> => {
    const headers: Record<string, string> = {
      'user-agent': 'family-events-snapshot/1 (+https://familyevents.example/sources)',
      accept: 'text/calendar, application/rss+xml, application/atom+xml, application/xml, text/html, text/csv;q=0.9, */*;q=0.5',
    };
    if (cached && meta.etag) headers['if-none-match'] = meta.etag;
    if (cached && meta.lastModified) headers['if-modified-since'] = meta.lastModified;
    let res: Awaited<ReturnType<typeof fetch>>;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      res = await fetch(location, { headers, signal, redirect: 'follow' });
    } catch (err) {
      const e = err as Error;
      throw new FetchError(e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : `network error: ${e.message}`);
    }
    if (res.status === 304 && cached) {
      await res.body?.cancel();
      return { text: decode(cached, meta.charset ?? null), bytes: 0, notModified: true };
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      await res.body?.cancel();
      throw new AbortError(new FetchError(`HTTP ${res.status}`));
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new FetchError(`HTTP ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length'));
    if (declared > max) {
      await res.body?.cancel();
      throw new AbortError(new FetchError(`body of ${declared} bytes exceeds the ${max}-byte limit`));
    }
    let buf: Buffer;
    try {
      buf = await readCapped(res.body, max);
    } catch (err) {
      if (err instanceof AbortError) throw err;
      const e = err as Error;
      throw new FetchError(e.name === 'TimeoutError' || signal.aborted ? `timed out after ${timeoutMs} ms` : `read error: ${e.message}`);
    }
    const charset = charsetOf(res.headers.get('content-type'));
    const next: CacheMeta = { url: location };
    const etag = res.headers.get('etag');
    const lastModified = res.headers.get('last-modified');
    if (etag) next.etag = etag;
    if (lastModified) next.lastModified = lastModified;
    if (charset) next.charset = charset;
    await mkdir(dir, { recursive: true });
    await writeAtomic(bodyFile, buf);
    await writeAtomic(metaFile, JSON.stringify(next));
    return { text: decode(buf, charset), bytes: buf.byteLength, notModified: false };
  };

  try {
    return await pRetry(attempt, {
      retries: opts.retries ?? 2,
      minTimeout: opts.backoffMs ?? 500,
      factor: 2,
      randomize: true,
    });
  } catch (err) {
    // p-retry rethrows an AbortError's original error, so this is already a FetchError in practice.
    throw err instanceof FetchError ? err : new FetchError((err as Error).message);
  }
}
