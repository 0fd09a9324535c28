// The sitemap over real HTTP, on the bundled sample: robots.txt names /sitemap.xml; that is a
// sitemap index whose every file is valid against the sitemaps.org 0.9 schema's shape (xmllint,
// the schema below), lists absolute URLs of WEB_BASE_URL with a valid <lastmod>, and together they
// name every event of the snapshot exactly once (an oracle read from the snapshot's own Parquet
// file, not through the server), the site's landing pages, and nothing that is not a page.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { get, sampleFixture, startTestServer, WEB, type Fixture, type TestServer } from '../helpers.ts';

let fx: Fixture;
let srv: TestServer;
let tmp: string;

before(async () => {
  fx = await sampleFixture();
  // Behind a proxy: the landing pages below are fetched from addresses of their own (listings are rate-limited per address).
  srv = await startTestServer(fx.dataDir, { TRUST_PROXY: 'true' });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'fe-sitemap-'));
  await writeFile(path.join(tmp, 'sitemap.xsd'), SITEMAP_XSD);
});
after(async () => {
  await srv?.stop();
  await fx?.cleanup();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';

/**
 * The sitemaps.org 0.9 schemas (sitemap.xsd and siteindex.xsd, 2008) as one: a urlset of 1+ url
 * and a sitemapindex of 1+ sitemap, loc an anyURI of 12 to 2048 characters, lastmod a date or a
 * dateTime, changefreq and priority as the protocol lists them. Written out here: tests fetch nothing.
 */
const SITEMAP_XSD = `<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="${NS}" xmlns="${NS}" elementFormDefault="qualified">
  <xsd:element name="urlset"><xsd:complexType><xsd:sequence>
    <xsd:element name="url" maxOccurs="unbounded"><xsd:complexType><xsd:all>
      <xsd:element name="loc" type="tLoc"/>
      <xsd:element name="lastmod" type="tLastmod" minOccurs="0"/>
      <xsd:element name="changefreq" type="tChangeFreq" minOccurs="0"/>
      <xsd:element name="priority" type="tPriority" minOccurs="0"/>
    </xsd:all></xsd:complexType></xsd:element>
  </xsd:sequence></xsd:complexType></xsd:element>
  <xsd:element name="sitemapindex"><xsd:complexType><xsd:sequence>
    <xsd:element name="sitemap" maxOccurs="unbounded"><xsd:complexType><xsd:all>
      <xsd:element name="loc" type="tLoc"/>
      <xsd:element name="lastmod" type="tLastmod" minOccurs="0"/>
    </xsd:all></xsd:complexType></xsd:element>
  </xsd:sequence></xsd:complexType></xsd:element>
  <xsd:simpleType name="tLoc"><xsd:restriction base="xsd:anyURI"><xsd:minLength value="12"/><xsd:maxLength value="2048"/></xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="tLastmod"><xsd:union memberTypes="xsd:date xsd:dateTime"/></xsd:simpleType>
  <xsd:simpleType name="tChangeFreq"><xsd:restriction base="xsd:string">
    <xsd:enumeration value="always"/><xsd:enumeration value="hourly"/><xsd:enumeration value="daily"/><xsd:enumeration value="weekly"/>
    <xsd:enumeration value="monthly"/><xsd:enumeration value="yearly"/><xsd:enumeration value="never"/>
  </xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="tPriority"><xsd:restriction base="xsd:decimal"><xsd:minInclusive value="0.0"/><xsd:maxInclusive value="1.0"/></xsd:restriction></xsd:simpleType>
</xsd:schema>
`;

let files = 0;
/** A sitemap file checked by xmllint against the schema: a failure is the test's, with xmllint's words. */
async function validate(text: string, what: string): Promise<void> {
  const file = path.join(tmp, `${files++}.xml`);
  await writeFile(file, text);
  try {
    execFileSync('xmllint', ['--noout', '--schema', path.join(tmp, 'sitemap.xsd'), file], { stdio: 'pipe' });
  } catch (err) {
    assert.fail(`${what} is not a valid sitemap: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
  }
}

interface Entry {
  readonly loc: string;
  readonly lastmod: string;
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', isArray: (name) => name === 'url' || name === 'sitemap' });

/** The entries of a sitemap or an index, parsed and checked for what the protocol asks of each. */
function entries(text: string, root: 'urlset' | 'sitemapindex', item: 'url' | 'sitemap', what: string): Entry[] {
  const doc = parser.parse(text) as Record<string, Record<string, unknown>>;
  const top = doc[root];
  assert.ok(top, `${what}: root is <${root}>`);
  assert.equal(top['@_xmlns'], NS, `${what}: the sitemaps.org namespace`);
  const list = (top[item] ?? []) as Entry[];
  assert.ok(list.length >= 1 && list.length <= 50_000, `${what}: 1 to 50,000 entries, not ${list.length}`);
  assert.ok(Buffer.byteLength(text) <= 50 * 1024 * 1024, `${what}: at most 50 MB`);
  for (const e of list) {
    assert.ok(e.loc.startsWith(`${WEB}/`), `${what}: ${e.loc} is an absolute URL of WEB_BASE_URL`);
    assert.equal(new URL(e.loc).href, e.loc, `${what}: ${e.loc} is a normalized URL`);
    assert.match(e.lastmod, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/, `${what}: lastmod is a W3C Datetime`);
    assert.equal(new Date(e.lastmod).getTime(), new Date(fx.build.manifest.built_at).getTime(), `${what}: lastmod is the snapshot's build time`);
  }
  return list;
}

const local = (url: string): string => url.slice(WEB.length);

let clients = 0;
/** A GET from an address of its own (the proxy's X-Forwarded-For). */
const fetchAs = (p: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('x-forwarded-for', `198.51.100.${(clients++ % 250) + 1}`);
  return get(srv.base, p, { ...init, headers });
};

describe('sitemap', () => {
  test('robots.txt names the sitemap by its absolute URL', async () => {
    const r = await fetchAs('/robots.txt');
    assert.equal(r.status, 200);
    const lines = r.text.split('\n');
    assert.ok(lines.includes(`Sitemap: ${WEB}/sitemap.xml`), r.text);
    assert.ok(lines.includes('User-agent: *'), r.text);
  });

  test('an index of valid sitemaps naming every event of the snapshot once, and the landing pages', { timeout: 120_000 }, async () => {
    const index = await fetchAs('/sitemap.xml');
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /^application\/xml/);
    await validate(index.text, '/sitemap.xml');
    const maps = entries(index.text, 'sitemapindex', 'sitemap', '/sitemap.xml').map((e) => e.loc);
    assert.equal(new Set(maps).size, maps.length, 'each sitemap once');

    const seen = new Map<string, number>();
    for (const map of maps) {
      const r = await fetchAs(local(map));
      assert.equal(r.status, 200, map);
      await validate(r.text, map);
      for (const e of entries(r.text, 'urlset', 'url', map)) seen.set(e.loc, (seen.get(e.loc) ?? 0) + 1);
    }

    // Every event of the snapshot exactly once, and no event that is not in it.
    const events = [...seen.keys()].filter((u) => u.startsWith(`${WEB}/events/`));
    const expected = new Set(fx.rows.map((r) => `${WEB}/events/${r.id}`));
    assert.ok(expected.size > 1000, `the sample has thousands of events: ${expected.size}`);
    for (const u of expected) assert.equal(seen.get(u), 1, `${u} is listed exactly once`);
    assert.equal(events.length, expected.size, 'no event outside the snapshot');
    for (const [u, n] of seen) assert.equal(n, 1, `${u} listed once`);

    // The landing pages: home, browse, the docs, cities and categories (only those keyless browsing lists).
    for (const p of ['/', '/events', '/docs', '/docs/errors']) assert.ok(seen.has(`${WEB}${p}`), `${p} is listed`);
    // The docs' page for every route of the OpenAPI document, each answering, its heading naming the route.
    const openapi = (await get(srv.base, '/v1/openapi.json')).json as { paths: Record<string, unknown> };
    const docsPages = [...seen.keys()].filter((u) => u.startsWith(`${WEB}/docs/`) && u !== `${WEB}/docs/errors`);
    assert.equal(docsPages.length, Object.keys(openapi.paths).length, `a docs page per route: ${docsPages.join(' ')}`);
    const headings: string[] = [];
    for (const u of docsPages) {
      const r = await fetchAs(local(u));
      assert.equal(r.status, 200, u);
      headings.push(/<h1>([\s\S]*?)<\/h1>/.exec(r.text)?.[1] ?? '');
    }
    for (const p of Object.keys(openapi.paths))
      assert.ok(
        headings.some((h) => h.includes(`<code class="endpoint">${p}</code>`)),
        `the docs page of ${p} is listed`,
      );
    const pages = [...seen.keys()].filter((u) => !u.startsWith(`${WEB}/events/`));
    assert.ok(
      pages.some((u) => u.startsWith(`${WEB}/cities/`)),
      'city pages are listed',
    );
    assert.ok(
      pages.some((u) => u.startsWith(`${WEB}/categories/`)),
      'category pages are listed',
    );
    assert.ok(!pages.includes(`${WEB}/categories/festivals`), 'a category the website does not list is not in the sitemap');
    // Each is a page that answers 200 (not a 403 or an error), and so do some event pages.
    for (const u of [...pages, ...events.filter((_, i) => i % 500 === 0)]) {
      const r = await fetchAs(local(u), { headers: { accept: 'text/html' } });
      assert.equal(r.status, 200, u);
      assert.doesNotMatch(r.text, /<meta name="robots" content="noindex">/, `${u} is indexable`);
    }
  });

  test('past the last sitemap: 404', async () => {
    const index = await fetchAs('/sitemap.xml');
    const n = entries(index.text, 'sitemapindex', 'sitemap', '/sitemap.xml').filter((e) => /\/sitemaps\/events-\d+\.xml$/.test(e.loc)).length;
    assert.equal((await fetchAs(`/sitemaps/events-${n + 1}.xml`)).status, 404);
    assert.equal((await fetchAs('/sitemaps/events-0.xml')).status, 404);
  });

  test('kept like a page: the same bytes and ETag again, 304 on revalidation, compressed when asked', async () => {
    for (const p of ['/sitemap.xml', '/sitemaps/pages.xml', '/sitemaps/events-1.xml']) {
      const a = await fetchAs(p);
      const b = await fetchAs(p);
      assert.equal(a.text, b.text, p);
      const etag = a.headers.get('etag') ?? '';
      assert.ok(etag.startsWith('"'), `${p}: a strong ETag`);
      assert.equal(b.headers.get('etag'), etag, p);
      assert.ok(a.headers.get('last-modified'), p);
      const again = await fetchAs(p, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304, p);
    }
    const big = await fetch(`${srv.base}/sitemaps/events-1.xml`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(big.headers.get('content-encoding'), 'br');
    await big.arrayBuffer();
  });
});
