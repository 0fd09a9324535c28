// A SearchQuery as the server's validation makes one for a bare search (upcoming, by start, no
// filters), with what a test sets over it: the query-thread tests' one starting point.
import type { SearchQuery } from '../../query/protocol.ts';

export const searchQuery = (q: Partial<SearchQuery> = {}): SearchQuery => ({
  cities: null,
  geo: null,
  ages: null,
  categories: null,
  words: null,
  isFree: null,
  range: 'upcoming',
  sort: 'start',
  limit: 10,
  offset: 0,
  ...q,
});
