-- One search: every filter, the total and one page of row numbers, in one round trip (the total
-- and the earliest end ride along as window aggregates over all matches). The worker fills the
-- place, hav, filters and order slots from sql/search_filters.sql with the fragments of the filters
-- the search uses (one prepared statement per combination, prepared on first use): DuckDB does not
-- fold a NULL parameter away, so "$x IS NULL OR …" would cost as much as the filter itself.
-- Every value is a parameter. Overlap range: start <= range end AND end >= range start (end_ms is
-- start_ms when an event has no end); "not ended yet" is from = now, to = the far future.
-- A page past the last match has no rows to carry the total: sql/search_count.sql answers then.
-- Rows come back as row numbers only (the records, ids included, are read from the record store),
-- with the venue's coordinates when the search has a centre (the worker computes the distances);
-- ord is the (start, id) order as one integer (sql/search_db_events.sql) and hav the distance
-- order when the search sorts by distance, returned so that a batch of searches in one statement
-- (query/db.ts pages) can put each one's rows back in order. A keyset page (a request's cursor)
-- keeps the rows after its key in QUALIFY, once the windows have counted every match: the total
-- stays the search's, and `remaining` says how many follow the key (whether there is a next page);
-- start_ms is the last row's half of the next cursor.
SELECT count(*) OVER ()::INTEGER AS total, min(end_ms) OVER ()::DOUBLE AS first_end,
       rid, {{place}}, {{hav}} AS hav, ord, start_ms, {{remaining}} AS remaining
FROM events
WHERE end_ms >= $from_ms AND start_ms <= $to_ms
  {{filters}}
{{qualify}}
ORDER BY {{order}}
LIMIT $limit OFFSET $offset
