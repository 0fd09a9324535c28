// Content-coding: which encoding a request accepts (negotiator, RFC 9110 q-values), and gzip or
// brotli through node:zlib. Compression runs on libuv's thread pool, never on the event loop.
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import type { BodySink, BodyStream } from './http.ts';

export type Encoding = 'identity' | 'gzip' | 'br';

/** Bodies up to this size go out as they are: the saving would not pay for the work. */
export const MIN_COMPRESSED_BYTES = 1024;

/** The encoding a body of `bytes` goes out in, given the one the request accepts best (null: size unknown yet). */
export const encodingFor = (wanted: Encoding, bytes: number | null): Encoding => (bytes !== null && bytes <= MIN_COMPRESSED_BYTES ? 'identity' : wanted);

// Equal q-values: brotli (smaller) before gzip before nothing.
const OFFERED: readonly Encoding[] = ['br', 'gzip', 'identity'];
// Brotli 5 and gzip 6: most of the size win at a fraction of the top levels' cost.
const BROTLI: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };
const GZIP: ZlibOptions = { level: 6 };

// Clients send a handful of distinct Accept-Encoding values over and over.
const negotiated = new LRUCache<string, Encoding>({ max: 1000 });

/** The encoding to answer a request with, given its Accept-Encoding header. */
export function negotiate(acceptEncoding: string | undefined): Encoding {
  if (acceptEncoding === undefined || acceptEncoding === '') return 'identity';
  let enc = negotiated.get(acceptEncoding);
  if (enc === undefined) {
    const n = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as {
      encoding(available: readonly string[], opts: { preferred: readonly string[] }): string | undefined;
    };
    // Nothing acceptable (e.g. "identity;q=0" alone): identity anyway, as RFC 9110 12.5.3 allows.
    enc = (n.encoding(OFFERED, { preferred: OFFERED }) as Encoding | undefined) ?? 'identity';
    negotiated.set(acceptEncoding, enc);
  }
  return enc;
}

const gzipAsync = promisify(gzip) as (b: Uint8Array, o: ZlibOptions) => Promise<Buffer>;
const brotliAsync = promisify(brotliCompress) as (b: Uint8Array, o: BrotliOptions) => Promise<Buffer>;

export function compress(body: Uint8Array, enc: 'gzip' | 'br'): Promise<Buffer> {
  return enc === 'br' ? brotliAsync(body, { ...BROTLI, params: { ...BROTLI.params, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }) : gzipAsync(body, GZIP);
}

/**
 * A streamed body, compressed on the way out. Backpressure runs through: a full socket pauses the
 * compressor's output, a full compressor holds the producer (whose credit it withholds).
 */
export function compressStream(inner: BodyStream, enc: 'gzip' | 'br'): BodyStream {
  return {
    pipe(sink: BodySink): void {
      const z = enc === 'br' ? createBrotliCompress(BROTLI) : createGzip(GZIP);
      let innerDrain: (() => void) | null = null;
      let over = false;
      z.on('data', (chunk: Buffer) => {
        if (!sink.write(chunk)) z.pause();
      });
      z.on('drain', () => innerDrain?.());
      z.on('end', () => {
        if (!over) sink.end();
        over = true;
      });
      z.on('error', () => {
        over = true;
        inner.cancel();
        sink.abort();
      });
      sink.onDrain(() => z.resume());
      inner.pipe({
        // zlib reads the chunk later, on its own thread.
        copies: false,
        write: (chunk) => z.write(chunk),
        end: () => z.end(),
        abort: () => {
          over = true;
          z.destroy();
          sink.abort();
        },
        onDrain: (cb) => {
          innerDrain = cb;
        },
      });
    },
    cancel: () => inner.cancel(),
  };
}
