-- Writes the snapshot's Parquet file. Rows are ordered by (ISO-week bucket, destination, latitude,
-- start) so that each small row group covers one week of one part of the region: row-group min/max
-- statistics then prune both date-range and place (city, radius bounding box) filters. Each row
-- carries its change times (sql/snapshot_changes.sql's table), after the schema's columns.
-- The TO target is the builder's own output path (a quoted literal: COPY takes no parameters there);
-- no request value ever reaches this file.
COPY (
  SELECT e.* EXCLUDE (merge_key, source_rank), c.content_hash, c.created_ms, c.updated_ms
  FROM events e JOIN changes c USING (id)
  ORDER BY e.start_ms // 604800000, e.destination, e.venue_lat, e.start_ms, id
) TO {{target}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096);
