import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { plainText, summarize, SUMMARY_MAX } from '../../../snapshot/normalize/text.ts';
import { fold, words } from '../../../core/text.ts';

const NO_MARKUP = /<\/?[a-z][^>]*>|&(?:#\d+|#x[\da-f]+|[a-z]+);/i;

describe('plainText', () => {
  test('strips tags, decodes entities and collapses whitespace (a Drupal export)', () => {
    const html =
      '<p>Songs, rhymes &amp; stories for toddlers <strong>18&nbsp;months&ndash;3&nbsp;years</strong>.</p>\n\n<p>Caf&eacute; &#8220;story&#8221; time &mdash; <a href="https://x.example/feed.ics">more</a></p>';
    assert.equal(plainText(html), 'Songs, rhymes & stories for toddlers 18 months–3 years. Café “story” time — more');
  });

  test('double-encoded entities (&amp;amp;) settle to the character', () => {
    assert.equal(plainText('<p>Arts &amp;amp; crafts</p>'), 'Arts & crafts');
  });

  test('script and style content never reaches the text', () => {
    const t = plainText('<div>Hello<script>alert("x")</script><style>p{}</style> world</div>');
    assert.equal(t, 'Hello world');
  });

  test('escaped four times or more is still decoded to the end: no live <img onerror> or <script> (issue 25)', () => {
    const esc = (x: string) => x.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
    let img = '<img src=x onerror=alert(1)>Family day';
    let script = '<script>alert(1)</script>Family day';
    for (let depth = 0; depth < 40; depth++, img = esc(img), script = esc(script)) {
      assert.equal(plainText(img), 'Family day', `img, depth ${depth}`);
      assert.equal(plainText(script), 'Family day', `script, depth ${depth}`);
    }
    // Numeric, hex, upper-case and legacy (no semicolon) escapes of the ampersand nest the same way.
    assert.equal(plainText('&#38;#38;#x26;AMP;lt;b&#38;amp;gt;x'), 'x');
    assert.equal(plainText('&ampamplt;b&ampampgt;x'), 'x');
    // "&#381;" is one character, not an escaped ampersand and "1;".
    assert.equal(plainText('&#381;'), 'Ž');
  });

  test('past the pass bound, what still reads as markup is made inert, not left live', () => {
    // The "#" of each numeric reference escaped at each level: no ampersand run to collapse, so one
    // pass per level, 30 levels.
    let s = '&#60;script&#62;alert(1)&#60;/script&#62;&#60;img src=x onerror=alert(2)&#62;';
    for (let i = 0; i < 30; i++) s = s.replaceAll('#', '&#35;');
    const out = plainText(s) ?? '';
    assert.notEqual(out, '');
    assert.doesNotMatch(out, /<[a-z!/?]/i);
    assert.doesNotMatch(out, /&(?:#|[a-z]{2})/i);
  });

  test('plain ampersands and angle brackets in prose are kept', () => {
    assert.equal(plainText('Q&A with AT&T: 1 < 2 > 0'), 'Q&A with AT&T: 1 < 2 > 0');
    assert.equal(plainText('<p>Tom &amp; Jerry</p>'), 'Tom & Jerry');
  });

  test('empty or whitespace-only becomes null', () => {
    assert.equal(plainText('  <p> </p> '), null);
    assert.equal(plainText(null), null);
  });

  test('property: no output ever contains a tag or an entity', () => {
    const piece = fc.constantFrom(
      '<p>',
      '</p>',
      '<br/>',
      '<b>',
      '</b>',
      '&amp;',
      '&lt;',
      '&gt;',
      '&nbsp;',
      '&#39;',
      'story',
      ' ',
      'time',
      '<a href="x">',
      '</a>',
      '&amp;amp;',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (parts) => {
        const out = plainText(parts.join(''));
        if (out !== null) assert.ok(!NO_MARKUP.test(out), out);
      }),
      { numRuns: 300 },
    );
  });
});

describe('summarize', () => {
  test('uses the upstream summary when there is one', () => {
    assert.equal(summarize('<b>Short</b> blurb', 'A long description'), 'Short blurb');
  });

  test('cuts the description at a word boundary within 200 characters', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 80 }), (ws) => {
        const d = ws.join(' ');
        const s = summarize(null, d)!;
        assert.ok(s.length <= SUMMARY_MAX, `${s.length}`);
        if (d.length <= SUMMARY_MAX) assert.equal(s, d);
        else {
          assert.ok(s.endsWith('…'));
          const body = s.slice(0, -1);
          assert.ok(d.startsWith(body));
          // The cut falls between words, never inside one (unless a single word is over 100 chars).
          assert.equal(d[body.length], ' ');
        }
      }),
    );
  });
});

describe('summarize: never inside a URL or a word; a sentence end when one fits', () => {
  test('a long URL is not cut: the summary stops before it (wallyhood.google.ics)', () => {
    const d =
      'Offered by the Scandinavian Language Institute. Cost: $220 for the full 9 weeks. https://www.scanlang.org/service-page/nor-1a-beginning-in-person-2?category=0d8212d5-5d67-4fce-95c0-6bf0745a9933&referral=service_list_widget https://www.wallyhood.org/2025/10/scandinavian-language-institute-beginning-norwegian-classes/';
    const s = summarize(null, d)!;
    assert.equal(s, 'Offered by the Scandinavian Language Institute. Cost: $220 for the full 9 weeks…');
    assert.ok(!s.includes('http'));
  });

  test('ends at the last whole sentence that fits (wallyhood.google.ics, FECO Cider Fest)', () => {
    const d =
      'Freeway Estates Community Orchard (FECO) 15th annual Cider Fest! Free hot, fresh-pressed cider, pies for sale, native plants, and friendly neighbors are waiting for you this Saturday afternoon. FECO is a garden on a 12,000 square foot plot, located next to Interstate 5 in the Green Lake neighborhood.';
    assert.equal(
      summarize(null, d),
      'Freeway Estates Community Orchard (FECO) 15th annual Cider Fest! Free hot, fresh-pressed cider, pies for sale, native plants, and friendly neighbors are waiting for you this Saturday afternoon.',
    );
  });

  test('abbreviations and initials are not sentence ends (hidden-hall.jsonld.html)', () => {
    const d =
      'two sets of Grateful Dead feat. Andy Coe, Colin Higgins, Keith Lowe, Paul Moore, Eric Eagle 8pm doors 9pm show 21+ Nectar Lounge 412 N 36th St www.nectarlounge.com Noted for their improvisational approach to the songbook and more words';
    const s = summarize(null, d)!;
    assert.ok(s.endsWith('…'), s);
    assert.ok(s.length > 150, s);
  });

  test('a cut falls only at whitespace, and a URL is never left dangling before the "…"', () => {
    const token = fc.oneof(
      fc.stringMatching(/^[a-z]{1,12}[.,]?$/),
      fc.constant('https://www.seattle.gov/animal-shelter/find-an-animal/adopt'),
      fc.constant('www.nectarlounge.com'),
    );
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 80 }), (ws) => {
        const d = ws.join(' ');
        const s = summarize(null, d);
        if (s === null) return;
        assert.ok(s.length <= SUMMARY_MAX, `${s.length}`);
        if (d.length <= SUMMARY_MAX) return assert.equal(s, d);
        const body = s.endsWith('…') ? s.slice(0, -1) : s;
        assert.ok(d.startsWith(body));
        assert.ok(
          /^[\s.,]/.test(d.slice(body.length)) || d.length === body.length,
          `cut inside a word: ${body.slice(-20)}|${d.slice(body.length, body.length + 20)}`,
        );
        if (s.endsWith('…')) assert.ok(!/(?:https?:\/\/|www\.)\S*$/.test(body), body.slice(-60));
      }),
    );
  });

  test('text with no spaces at all is cut by characters, and a bare URL gives no summary', () => {
    assert.equal(summarize(null, '字'.repeat(300)), `${'字'.repeat(SUMMARY_MAX - 1)}…`);
    assert.equal(summarize(null, `https://example.org/${'a'.repeat(300)}`), null);
  });
});

test('fold and words are case- and accent-insensitive', () => {
  assert.equal(fold('San José  '), 'san jose');
  assert.deepEqual(words('Día de los Muertos: ¡Papel picado!'), ['dia', 'de', 'los', 'muertos', 'papel', 'picado']);
});
