// The website's static files over real HTTP: pages link only content-hashed names, each answered
// as immutable for a year with the bytes its hash is of (the file in server/web/static); the plain
// names, and a hashed name of another deploy, still answer with a short cache, so a page a
// browser kept from before finds its stylesheet.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue } from 'domutils';
import { get, sampleFixture, startTestServer, type Fixture, type TestServer } from '../helpers.ts';
import { REPO_ROOT } from '../../../core/config.ts';

let fx: Fixture;
let srv: TestServer;

before(async () => {
  fx = await sampleFixture();
  srv = await startTestServer(fx.dataDir);
});
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
});

const HASHED = /^\/static\/([a-z]+)\.([0-9a-f]{16})(\.[a-z]+)$/;
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The bytes of a URL as served (fetch undoes any Content-Encoding). */
async function bytes(p: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(`${srv.base}${p}`, init);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

const maxAge = (cacheControl: string | null): number => Number(/max-age=(\d+)/.exec(cacheControl ?? '')?.[1] ?? NaN);

/** Every static URL a page links: stylesheets, icons, scripts. */
function staticRefs(html: string): string[] {
  const doc = parseDocument(html);
  const refs: string[] = [];
  for (const e of findAll(() => true, doc.children)) {
    const url = e.name === 'link' ? getAttributeValue(e, 'href') : e.name === 'script' ? getAttributeValue(e, 'src') : undefined;
    if (url !== undefined && url.startsWith('/static/')) refs.push(url);
  }
  return refs;
}

describe('static files', () => {
  test('pages link only hashed names; each is immutable, and its hash is of the bytes served', async () => {
    const event = fx.rows[0];
    assert.ok(event);
    const linked = new Set<string>();
    for (const p of ['/', '/events', '/docs', `/events/${event.id}`, '/account/sign-in', '/no-such-page']) {
      const r = await get(srv.base, p);
      const refs = staticRefs(r.text);
      assert.ok(refs.length >= 2, `${p}: links its stylesheet and icon: ${refs.join(' ')}`);
      for (const ref of refs) {
        assert.match(ref, HASHED, `${p}: ${ref} is a content-hashed name`);
        linked.add(ref);
      }
    }
    const names = new Set<string>();
    for (const ref of linked) {
      const [, stem, hash, ext] = HASHED.exec(ref) as unknown as [string, string, string, string];
      const name = `${stem}${ext}`;
      names.add(name);
      const r = await bytes(ref);
      assert.equal(r.status, 200, ref);
      assert.equal(r.headers.get('cache-control'), IMMUTABLE, ref);
      assert.ok(r.headers.get('etag'), `${ref}: an ETag`);
      assert.equal(createHash('sha256').update(r.body).digest('hex').slice(0, 16), hash, `${ref}: the name's hash is of the bytes served`);
      assert.deepEqual(r.body, await readFile(path.join(REPO_ROOT, 'server', 'web', 'static', name)), `${ref}: the file's bytes`);
      // Compressed forms are the same bytes.
      for (const enc of ['gzip', 'br']) assert.deepEqual((await bytes(ref, { headers: { 'accept-encoding': enc } })).body, r.body, `${ref} ${enc}`);
    }
    assert.deepEqual([...names].sort(), ['favicon.svg', 'site.css', 'site.js'], 'pages link the stylesheet, the icon and the script');
  });

  test('the plain names still answer, with the same bytes and a short cache', async () => {
    for (const name of ['site.css', 'site.js', 'favicon.svg']) {
      const r = await bytes(`/static/${name}`);
      assert.equal(r.status, 200, name);
      assert.deepEqual(r.body, await readFile(path.join(REPO_ROOT, 'server', 'web', 'static', name)), name);
      const cc = r.headers.get('cache-control') ?? '';
      assert.doesNotMatch(cc, /immutable/, `${name}: ${cc}`);
      assert.ok(maxAge(cc) <= 3600, `${name}: a short cache: ${cc}`);
      const again = await bytes(`/static/${name}`, { headers: { 'if-none-match': r.headers.get('etag') ?? '' } });
      assert.equal(again.status, 304, name);
    }
  });

  test("another deploy's hashed name gets today's bytes, never as immutable; an unknown file is a 404", async () => {
    const r = await bytes('/static/site.0123456789abcdef.css');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, await readFile(path.join(REPO_ROOT, 'server', 'web', 'static', 'site.css')));
    assert.doesNotMatch(r.headers.get('cache-control') ?? '', /immutable/);
    assert.equal((await bytes('/static/other.0123456789abcdef.css')).status, 404);
    assert.equal((await bytes('/static/site.0123456789abcdef.svg')).status, 404);
  });
});
