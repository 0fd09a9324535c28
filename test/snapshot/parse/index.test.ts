import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FeedFormat } from '../../../snapshot/registry.ts';
import { parseFeed, sniffFormat } from '../../../snapshot/parse/index.ts';
import { FeedFormatError } from '../../../snapshot/parse/types.ts';
import { fixture, WINDOW } from './helpers.ts';

const CASES: readonly (readonly [string, FeedFormat])[] = [
  ['google-calendar-library.ics', 'ical'],
  ['outlook-export.ics', 'ical'],
  ['libcal-events.ics', 'ical'],
  ['drupal-events.rss', 'rss'],
  ['parks-events.atom', 'rss'],
  ['tec-graph-page.html', 'jsonld'],
  ['per-event-scripts.html', 'jsonld'],
  ['itemlist-page.html', 'jsonld'],
  ['parks-spreadsheet.csv', 'csv'],
  ['tidy-export.csv', 'csv'],
  ['custom-headers.csv', 'csv'],
];

describe('sniffFormat', () => {
  test('recognizes each fixture by content alone', () => {
    for (const [file, format] of CASES) assert.equal(sniffFormat(fixture(file)), format, file);
  });

  test('an .ics or .html/.htm file name decides for content without an iCal or feed marker; a .html name does not override an RSS body', () => {
    assert.equal(sniffFormat(fixture('drupal-events.rss'), 'events.html'), 'rss');
    assert.equal(sniffFormat('Event Name,Date\r\nStorytime,12/1/2026\r\n', 'calendar.ics'), 'ical');
    assert.equal(sniffFormat('Event Name,Date\r\nStorytime,12/1/2026\r\n', 'events.csv'), 'csv');
    assert.equal(sniffFormat('Event Name,Date\r\n', 'export.HTM'), 'jsonld');
  });

  test('leading BOM and whitespace, RSS 1.0 (rdf:RDF), and an XML prolog before <rss>', () => {
    assert.equal(sniffFormat(`\uFEFF\r\n${fixture('libcal-events.ics')}`), 'ical');
    assert.equal(sniffFormat('<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><channel/></rdf:RDF>'), 'rss');
    assert.equal(
      sniffFormat('<?xml version="1.0" encoding="UTF-8"?>\n<?xml-stylesheet type="text/xsl" href="/rss.xsl"?>\n<rss version="2.0"><channel/></rss>'),
      'rss',
    );
    assert.equal(sniffFormat('\n\n  <!doctype html><html></html>'), 'jsonld');
  });
});

describe('parseFeed', () => {
  test('dispatches each fixture to the parser of its sniffed format (events come back)', async () => {
    for (const [file, format] of CASES) {
      const out = await parseFeed(format, fixture(file), {
        window: WINDOW,
        csvColumns: file === 'custom-headers.csv' ? { title: 'Program', start: 'Begins' } : undefined,
      });
      assert.ok(out.events.length > 0, `${file} as ${format}: no events`);
    }
  });

  test('the wrong format for a document is rejected, not misread', async () => {
    await assert.rejects(parseFeed('rss', fixture('libcal-events.ics'), { window: WINDOW }), FeedFormatError);
    await assert.rejects(parseFeed('ical', fixture('drupal-events.rss'), { window: WINDOW }), FeedFormatError);
    await assert.rejects(parseFeed('csv', fixture('tec-graph-page.html'), { window: WINDOW }), FeedFormatError);
    await assert.rejects(parseFeed('jsonld', fixture('tidy-export.csv'), { window: WINDOW }), FeedFormatError);
  });
});
