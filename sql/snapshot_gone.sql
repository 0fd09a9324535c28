-- Writes a new snapshot's gone.jsonl (snapshot/gone.ts): one GoneEvent a line, its fields in
-- order, sorted by id. The list is the previous snapshot's events this one lacks, removed by this
-- build ($removed_at), and the previous list's entries still absent, keeping the removed_at of the
-- build that first lost them; minus whatever started before $cutoff_ms (or has no readable start).
-- The read_parquet paths and the COPY target are the builder's own files, as quoted literals; no
-- request value reaches this file.
COPY (
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
  SELECT * FROM gone
  WHERE epoch_ms(try_cast(start_datetime AS TIMESTAMPTZ)) >= $cutoff_ms::BIGINT
  ORDER BY id
) TO {{target}} (FORMAT json);
