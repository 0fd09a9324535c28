-- One search: every filter, the total and one page of row numbers, in one round trip. The worker
-- fills the distance, filters and order slots from sql/search_filters.sql with the fragments of
-- the filters the search uses (one prepared statement per combination, prepared on first use):
-- DuckDB does not fold a NULL parameter away, so "$x IS NULL OR …" costs as much as the filter.
-- Every value is a parameter. Overlap range: start <= range end AND end >= range start (end_ms is
-- start_ms when an event has no end); "not ended yet" is from = now, to = the far future.
WITH hits AS (
  SELECT rid, id, start_ms, end_ms, {{distance}} AS distance_km
  FROM events
  WHERE end_ms >= $from_ms AND start_ms <= $to_ms
  {{filters}}
),
page AS (
  SELECT rid, id, start_ms, distance_km FROM hits
  ORDER BY {{order}}
  LIMIT $limit OFFSET $offset
),
stats AS (
  SELECT count(*)::INTEGER AS total, min(end_ms)::DOUBLE AS first_end FROM hits
)
SELECT stats.total, stats.first_end, page.rid, page.id, page.distance_km
FROM stats LEFT JOIN page ON true
ORDER BY {{order}}
