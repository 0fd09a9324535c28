import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fold, plainText, summarize, SUMMARY_MAX, words } from '../../../../workers/snapshot/normalize/text.ts';

const NO_MARKUP = /<\/?[a-z][^>]*>|&(?:#\d+|#x[\da-f]+|[a-z]+);/i;

describe('plainText', () => {
  test('strips tags, decodes entities and collapses whitespace (a Drupal export)', () => {
    const html = '<p>Songs, rhymes &amp; stories for toddlers <strong>18&nbsp;months&ndash;3&nbsp;years</strong>.</p>\n\n<p>Caf&eacute; &#8220;story&#8221; time &mdash; <a href="https://x.example/feed.ics">more</a></p>';
    assert.equal(plainText(html), 'Songs, rhymes & stories for toddlers 18 months–3 years. Café “story” time — more');
  });

  test('double-encoded entities (&amp;amp;) settle to the character', () => {
    assert.equal(plainText('<p>Arts &amp;amp; crafts</p>'), 'Arts & crafts');
  });

  test('script and style content never reaches the text', () => {
    const t = plainText('<div>Hello<script>alert("x")</script><style>p{}</style> world</div>');
    assert.equal(t, 'Hello world');
  });

  test('empty or whitespace-only becomes null', () => {
    assert.equal(plainText('  <p> </p> '), null);
    assert.equal(plainText(null), null);
  });

  test('property: no output ever contains a tag or an entity', () => {
    const piece = fc.constantFrom('<p>', '</p>', '<br/>', '<b>', '</b>', '&amp;', '&lt;', '&gt;', '&nbsp;', '&#39;', 'story', ' ', 'time', '<a href="x">', '</a>', '&amp;amp;');
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

test('fold and words are case- and accent-insensitive', () => {
  assert.equal(fold('San José  '), 'san jose');
  assert.deepEqual(words('Día de los Muertos: ¡Papel picado!'), ['dia', 'de', 'los', 'muertos', 'papel', 'picado']);
});
