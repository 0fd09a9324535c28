-- Writes the snapshot's Parquet file. Rows are ordered by (ISO-week bucket, destination, latitude,
-- start) so that each small row group covers one week of one part of the region: row-group min/max
-- statistics then prune both date-range and place (city, radius bounding box) filters.
-- The TO target is the builder's own output path (a quoted literal: COPY takes no parameters there);
-- no request value ever reaches this file.
COPY (
  SELECT * EXCLUDE (merge_key, source_rank) FROM events
  ORDER BY start_ms // 604800000, destination, venue_lat, start_ms, id
) TO {{target}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096);
