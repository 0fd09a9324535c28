-- One page of the change feed's records (/v1/changes; query/changes.ts says why it is exact):
-- the events after the cursor's (updated_ms, id) position, in that order, each with whether it
-- matches the feed's filters. One that does not is delivered as a deletion, and only when it was
-- stamped after the cursor's horizon (before it, the client never held it). The worker fills the
-- filters slot with sql/search_filters.sql's fragments, as for a search; every value is a
-- parameter. The total of qualifying rows rides along as a window aggregate.
SELECT count(*) OVER ()::INTEGER AS total, rid, id, updated_ms::DOUBLE AS updated_ms, matches
FROM (
  SELECT rid, id, updated_ms, (end_ms >= $from_ms AND start_ms <= $to_ms
    {{filters}}) AS matches
  FROM events
  WHERE updated_ms > $after_ms OR (updated_ms = $after_ms AND id > $after_id)
)
WHERE matches OR updated_ms > $horizon_ms
ORDER BY updated_ms, id
LIMIT $limit
