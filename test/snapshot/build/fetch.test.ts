// fetchSource against a real loopback HTTP server: bodies, conditional GET, retries, timeouts,
// the byte cap (declared and streamed), charset decoding, and local files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fetchSource, FetchError } from '../../../snapshot/build/fetch.ts';
import type { FetchOptions } from '../../../snapshot/build/fetch.ts';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, hit: number) => void;

let tmp: string;
let server: http.Server;
let base: string;
const routes = new Map<string, Handler>();
/** Request headers seen per path, in order. */
const seen = new Map<string, http.IncomingHttpHeaders[]>();
/** Server-side timers to clear when a test's connection goes away. */
const timers = new Set<NodeJS.Timeout>();

const hits = (p: string): number => seen.get(p)?.length ?? 0;

function opts(sourceId: string, extra: Partial<FetchOptions> = {}): FetchOptions {
  return { cacheDir: path.join(tmp, 'cache'), sourceId, timeoutMs: 300, retries: 2, backoffMs: 10, ...extra };
}

/** Expects fetchSource to reject with a FetchError whose message matches `re`; returns the message. */
async function rejectsWith(p: Promise<unknown>, re: RegExp): Promise<string> {
  let caught: unknown;
  await p.then(
    () => assert.fail('expected fetchSource to reject'),
    (err: unknown) => {
      caught = err;
    },
  );
  assert.ok(caught instanceof FetchError, `expected a FetchError, got ${String(caught)}`);
  assert.match(caught.message, re);
  return caught.message;
}

before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fe-'));
  server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://localhost').pathname;
    const list = seen.get(p) ?? [];
    list.push(req.headers);
    seen.set(p, list);
    res.on('error', () => {});
    const h = routes.get(p);
    if (h) h(req, res, list.length);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const t of timers) clearInterval(t);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('fetchSource over HTTP', () => {
  test('a 200 body is returned decoded, with its byte count', async () => {
    const body = 'BEGIN:VCALENDAR\r\nSUMMARY:Niños Storytime — Mission Branch\r\nEND:VCALENDAR\r\n';
    const bytes = Buffer.from(body, 'utf8');
    routes.set('/ok.ics', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' });
      res.end(bytes);
    });
    const got = await fetchSource(`${base}/ok.ics`, opts('ok'));
    assert.equal(got.text, body);
    assert.equal(got.bytes, bytes.byteLength);
    assert.equal(got.notModified, false);
    assert.equal(hits('/ok.ics'), 1);
  });

  test('conditional GET: the second fetch sends If-None-Match / If-Modified-Since and a 304 returns the cached text', async () => {
    const etag = '"v1-storytime"';
    const lastModified = 'Sat, 14 Nov 2026 08:00:00 GMT';
    const body = 'title,start\r\nCafé con cuentos,2026-11-25T10:00:00-08:00\r\n';
    routes.set('/cond.csv', (req, res) => {
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8', etag, 'last-modified': lastModified });
      res.end(Buffer.from(body, 'utf8'));
    });

    const first = await fetchSource(`${base}/cond.csv`, opts('cond'));
    assert.equal(first.notModified, false);
    assert.equal(first.text, body);
    const firstReq = seen.get('/cond.csv')![0]!;
    assert.equal(firstReq['if-none-match'], undefined, 'nothing is cached yet, so nothing is conditional');
    assert.equal(firstReq['if-modified-since'], undefined);

    const second = await fetchSource(`${base}/cond.csv`, opts('cond'));
    assert.equal(hits('/cond.csv'), 2);
    const secondReq = seen.get('/cond.csv')![1]!;
    assert.equal(secondReq['if-none-match'], etag);
    assert.equal(secondReq['if-modified-since'], lastModified);
    assert.equal(second.notModified, true);
    assert.equal(second.text, body);
    assert.equal(second.bytes, 0);
  });

  // The cache (meta.json + body) is keyed by sourceId only and does not record the address, so after
  // a registry url change the old address's validators go to the new one. A server that honours
  // If-Modified-Since (RFC 9110 §13.1.3: 304 when not modified since that date) would make
  // fetchSource return the OLD feed's body as the new feed; the cache records its address.
  test("the cache is per address: a moved feed is not answered with the old address's cached body", async () => {
    routes.set('/old-home.ics', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/calendar', 'last-modified': 'Sat, 14 Nov 2026 08:00:00 GMT' });
      res.end('OLD FEED');
    });
    const newLastModified = 'Sun, 01 Nov 2026 08:00:00 GMT';
    routes.set('/new-home.ics', (req, res) => {
      const ims = req.headers['if-modified-since'];
      if (ims && Date.parse(ims) >= Date.parse(newLastModified)) {
        res.writeHead(304);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/calendar', 'last-modified': newLastModified });
      res.end('NEW FEED');
    });
    assert.equal((await fetchSource(`${base}/old-home.ics`, opts('moved'))).text, 'OLD FEED');
    const got = await fetchSource(`${base}/new-home.ics`, opts('moved'));
    assert.equal(got.text, 'NEW FEED');
    assert.equal(got.notModified, false);
  });

  test('transient 503s are retried: 503, 503, 200 succeeds after 3 requests', async () => {
    routes.set('/flaky.xml', (_req, res, n) => {
      if (n <= 2) {
        res.writeHead(503, { 'retry-after': '0' });
        res.end('busy');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
      res.end('<rss version="2.0"><channel><title>ok</title></channel></rss>');
    });
    const got = await fetchSource(`${base}/flaky.xml`, opts('flaky'));
    assert.equal(got.text, '<rss version="2.0"><channel><title>ok</title></channel></rss>');
    assert.equal(hits('/flaky.xml'), 3);
  });

  test('a 404 fails at once with "HTTP 404" (no retry)', async () => {
    await rejectsWith(fetchSource(`${base}/missing.ics`, opts('missing')), /HTTP 404/);
    assert.equal(hits('/missing.ics'), 1);
  });

  test('a 500 that never recovers fails with "HTTP 500" after 1 + retries requests', async () => {
    routes.set('/broken', (_req, res) => {
      res.writeHead(500);
      res.end('oops');
    });
    await rejectsWith(fetchSource(`${base}/broken`, opts('broken')), /HTTP 500/);
    assert.equal(hits('/broken'), 3);
  });

  test('a server that never answers times out (and the timeout is retried)', async () => {
    routes.set('/hang', () => {
      // Never respond; closeAllConnections() in after() drops the socket.
    });
    await rejectsWith(fetchSource(`${base}/hang`, opts('hang')), /timed out/);
    assert.equal(hits('/hang'), 3);
  });

  test('a server that sends headers and then dribbles the body times out', async () => {
    routes.set('/dribble', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/calendar' });
      res.write('BEGIN:VCALENDAR\r\n');
      const t = setInterval(() => res.write(' '), 40);
      timers.add(t);
      res.on('close', () => {
        clearInterval(t);
        timers.delete(t);
      });
    });
    await rejectsWith(fetchSource(`${base}/dribble`, opts('dribble')), /timed out/);
  });

  test('a declared Content-Length over maxBytes fails naming the limit, without retry', async () => {
    const size = 4096;
    routes.set('/big-declared', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(size) });
      res.end(Buffer.alloc(size, 'x'));
    });
    const msg = await rejectsWith(fetchSource(`${base}/big-declared`, opts('big-declared', { maxBytes: 1024 })), /1024-byte limit/);
    assert.match(msg, new RegExp(`${size} bytes`));
    assert.equal(hits('/big-declared'), 1);
  });

  test('a chunked body streaming past maxBytes fails, and the server sees the client hang up', async () => {
    const LIMIT = 64 * 1024 * 1024; // a safety stop; the client must hang up long before
    const chunk = Buffer.alloc(16 * 1024, 'y');
    let serverDone!: (r: { sent: number; finished: boolean }) => void;
    const closed = new Promise<{ sent: number; finished: boolean }>((resolve) => (serverDone = resolve));
    routes.set('/big-chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' }); // no content-length → chunked
      let sent = 0;
      let stopped = false;
      const pump = (): void => {
        while (!stopped && sent < LIMIT) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!stopped) res.end();
      };
      res.on('close', () => {
        stopped = true;
        serverDone({ sent, finished: res.writableFinished });
      });
      pump();
    });
    const msg = await rejectsWith(fetchSource(`${base}/big-chunked`, opts('big-chunked', { maxBytes: 4096 })), /4096-byte limit/);
    assert.doesNotMatch(msg, /timed out/);
    const { sent, finished } = await closed;
    assert.equal(finished, false, 'the client aborted the transfer rather than reading it all');
    assert.ok(sent < LIMIT, `server stopped after ${sent} bytes`);
    assert.equal(hits('/big-chunked'), 1, 'a body over the cap is not retried');
  });
});

describe('charset decoding', () => {
  const serve = (p: string, contentType: string, bytes: Buffer): void => {
    routes.set(p, (_req, res) => {
      res.writeHead(200, { 'content-type': contentType });
      res.end(bytes);
    });
  };

  test('a windows-1252 body with a header charset decodes to "Café niños"', async () => {
    serve('/cp1252.csv', 'text/csv; charset=windows-1252', Buffer.from('Caf\xe9 ni\xf1os', 'latin1'));
    const got = await fetchSource(`${base}/cp1252.csv`, opts('cp1252'));
    assert.equal(got.text, 'Café niños');
    assert.equal(got.bytes, 10);
  });

  test('the header charset wins over UTF-8 detection', async () => {
    // C3 A9 is "é" in UTF-8 but "Ã©" in windows-1252: the declared charset must decide.
    serve('/cp1252-utf8ish.csv', 'text/csv; charset="windows-1252"', Buffer.from([0x43, 0x61, 0x66, 0xc3, 0xa9]));
    const got = await fetchSource(`${base}/cp1252-utf8ish.csv`, opts('cp1252-utf8ish'));
    assert.equal(got.text, 'Caf\u00c3\u00a9');
  });

  test('an XML prolog encoding="ISO-8859-1" with no header charset decodes correctly', async () => {
    const prolog = '<?xml version="1.0" encoding="ISO-8859-1"?>\n';
    const xml = `${prolog}<rss version="2.0"><channel><title>Caf\xe9 ni\xf1os</title></channel></rss>`;
    serve('/latin1.xml', 'application/rss+xml', Buffer.from(xml, 'latin1'));
    const got = await fetchSource(`${base}/latin1.xml`, opts('latin1'));
    assert.equal(got.text, `${prolog}<rss version="2.0"><channel><title>Café niños</title></channel></rss>`);

    // Bytes that are also valid UTF-8: only the prolog says how to read them.
    const xml2 = Buffer.concat([Buffer.from(`${prolog}<title>`, 'latin1'), Buffer.from([0xc3, 0xb1]), Buffer.from('</title>', 'latin1')]);
    serve('/latin1-utf8ish.xml', 'application/xml', xml2);
    const got2 = await fetchSource(`${base}/latin1-utf8ish.xml`, opts('latin1-utf8ish'));
    assert.equal(got2.text, `${prolog}<title>\u00c3\u00b1</title>`);
  });

  test('invalid UTF-8 with no declaration falls back to windows-1252 instead of throwing', async () => {
    // "\xe9 " is not valid UTF-8, so a fatal UTF-8 decode throws and the fallback must take over.
    const bytes = Buffer.from('Caf\xe9 ni\xf1os', 'latin1');
    serve('/nodecl.txt', 'text/plain', bytes);
    const got = await fetchSource(`${base}/nodecl.txt`, opts('nodecl'));
    assert.equal(got.text, 'Café niños');
    assert.ok(!got.text.includes('\ufffd'), 'no replacement characters');
  });

  // Node >= 20.18.3 decodes TextDecoder('windows-1252') as ISO-8859-1 (nodejs/node#60888), so
  // bytes 0x80-0x9F come out as C1 control characters instead of curly quotes, dashes, euro sign.
  // decode() therefore uses iconv-lite for legacy charsets.
  test('the windows-1252 fallback maps 0x80-0x9F (curly quotes, en dash, euro) to their characters', async () => {
    // 0x93/0x94 are curly quotes, 0x96 an en dash, 0x80 the euro sign; none is valid UTF-8 here.
    const bytes = Buffer.from('\x93Storytime\x94 \x96 ages 3\x965, \x805', 'latin1');
    serve('/nodecl-c1.txt', 'text/plain', bytes);
    const got = await fetchSource(`${base}/nodecl-c1.txt`, opts('nodecl-c1'));
    assert.equal(got.text, '\u201cStorytime\u201d \u2013 ages 3\u20135, \u20ac5');
  });
});

describe('local files', () => {
  test('a local path is read and decoded', async () => {
    const file = path.join(tmp, 'feed.csv');
    const body = 'title,start,location\nCafé Storytime,2026-11-25T10:00:00-08:00,"Mission Branch Library, 300 Bartlett St, San Francisco, CA 94110"\n';
    await fs.writeFile(file, body, 'utf8');
    const got = await fetchSource(file, opts('local'));
    assert.equal(got.text, body);
    assert.equal(got.bytes, (await fs.stat(file)).size);
    assert.equal(got.notModified, false);
  });

  test('a missing local file fails with "no such file"', async () => {
    const file = path.join(tmp, 'does-not-exist.ics');
    const msg = await rejectsWith(fetchSource(file, opts('local-missing')), /no such file/);
    assert.ok(msg.includes(file), 'the message names the path');
  });
});
