// The reference documents (/v1/categories, /v1/cities, /v1/openapi.json, and their /api twins on
// the website host) answer like every other 200 of the API (server/fixed-answer.ts): a strong ETag,
// Vary: Accept-Encoding, a 304 without a body to a client that holds the body, and brotli or gzip
// forms that decode (node:zlib) to the identity body, each with its own ETag.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { sampleFixture, startTestServer, type Fixture, type TestServer } from './helpers.ts';

let fx: Fixture;
let ts: TestServer;

before(async () => {
  fx = await sampleFixture();
  ts = await startTestServer(fx.dataDir);
});

after(async () => {
  await ts?.stop();
  await fx?.cleanup();
});

/** The raw bytes and headers of a GET (fetch would decode a compressed body). */
async function raw(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${ts.base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

for (const path of ['/v1/categories', '/v1/cities', '/v1/openapi.json', '/api/v1/cities']) {
  test(`${path}: ETag, Vary, 304 to a holder, compressed forms that decode to the body`, async () => {
    const plain = await raw(path);
    assert.equal(plain.status, 200);
    const etag = plain.headers.get('etag');
    assert.match(etag ?? '', /^"[^"]+"$/, 'a strong ETag');
    assert.equal(plain.headers.get('vary'), 'Accept-Encoding');
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.ok(JSON.parse(plain.body.toString('utf8')), 'the body is JSON');

    const again = await raw(path, { 'if-none-match': etag as string });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.get('etag'), etag);

    for (const [enc, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const packed = await raw(path, { 'accept-encoding': enc });
      assert.equal(packed.status, 200);
      if (plain.body.length <= 1024) {
        assert.equal(packed.headers.get('content-encoding'), null, 'a body of 1 KiB or less goes out as it is');
        continue;
      }
      assert.equal(packed.headers.get('content-encoding'), enc);
      assert.ok(packed.body.length < plain.body.length);
      assert.deepEqual(decode(packed.body), plain.body);
      assert.notEqual(packed.headers.get('etag'), etag, 'each coding is its own representation');
      // Any coding's tag names the same content.
      assert.equal((await raw(path, { 'accept-encoding': enc, 'if-none-match': packed.headers.get('etag') as string })).status, 304);
    }
    // A stale tag gets the body.
    assert.equal((await raw(path, { 'if-none-match': '"stale"' })).status, 200);
  });
}
