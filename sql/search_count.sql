-- The total and earliest end of a search whose page is empty (offset past the last match): the
-- same filters as sql/search.sql, assembled the same way.
SELECT count(*)::INTEGER AS total, min(end_ms)::DOUBLE AS first_end
FROM events
WHERE end_ms >= $from_ms AND start_ms <= $to_ms
  {{filters}}
