// Format → parser. The registry names the format; `normalize FILE` guesses it from the content.
import type { FeedFormat } from '../registry.ts';
import { parseCsv } from './csv.ts';
import { parseICal } from './ical.ts';
import { parseJsonLd } from './jsonld.ts';
import { parseRss } from './rss.ts';
import type { ParseOptions, ParseOutput } from './types.ts';

export async function parseFeed(format: FeedFormat, text: string, opts: ParseOptions): Promise<ParseOutput> {
  switch (format) {
    case 'ical':
      return parseICal(text, opts);
    case 'rss':
      return parseRss(text, opts);
    case 'jsonld':
      return parseJsonLd(text, opts);
    case 'csv':
      return parseCsv(text, opts);
  }
}

export function sniffFormat(text: string, filename = ''): FeedFormat {
  const head = text.slice(0, 4096).trimStart().toLowerCase();
  if (head.startsWith('begin:vcalendar') || /\.ics$/i.test(filename)) return 'ical';
  if (head.includes('<rss') || head.includes('<feed') || head.includes('<rdf:rdf')) return 'rss';
  if (head.startsWith('<') || /\.html?$/i.test(filename)) return 'jsonld';
  return 'csv';
}
