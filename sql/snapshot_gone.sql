-- A new snapshot's gone list (snapshot/gone.ts): the previous snapshot's events this one lacks,
-- removed by this build ($removed_at), and the previous list's entries still absent, keeping the
-- removed_at of the build that first lost them. An entry is kept while it started less than
-- $cutoff_ms ago (its link may still be followed) or was removed less than $tombstone_ms ago (the
-- change feed's deletions, /v1/changes); what neither keeps is pruned, and the latest removal
-- pruned says from when the list is complete.
-- The read_parquet paths and the COPY target are the builder's own files, as quoted literals; no
-- request value reaches this file.

-- query: list
CREATE TEMP TABLE gone AS
WITH
  kept AS (SELECT id FROM read_parquet({{current}})),
  served AS (SELECT id, title, start_datetime, venue_city, categories FROM read_parquet({{previous}})),
  gone AS (
    SELECT id, title, start_datetime, venue_city, categories, $removed_at::VARCHAR AS removed_at
    FROM served ANTI JOIN kept USING (id)
    UNION ALL
    SELECT id, title, start_datetime, venue_city, categories, removed_at
    FROM (previous_gone ANTI JOIN kept USING (id)) ANTI JOIN served USING (id)
  )
SELECT *,
       coalesce(epoch_ms(try_cast(start_datetime AS TIMESTAMPTZ)) >= $cutoff_ms::BIGINT, false)
         OR coalesce(epoch_ms(try_cast(removed_at AS TIMESTAMPTZ)) >= $tombstone_ms::BIGINT, false) AS keep
FROM gone

-- query: write
-- One GoneEvent a line, its fields in order, sorted by id.
COPY (SELECT * EXCLUDE (keep) FROM gone WHERE keep ORDER BY id) TO {{target}} (FORMAT json)

-- query: pruned
SELECT max(removed_at) FROM gone WHERE NOT keep
