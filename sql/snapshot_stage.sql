-- Build-time columns beside the snapshot schema; sql/snapshot_write.sql leaves them out of the file.
-- merge_key: title words | start minute | venue — rows sharing it are one real-world event.
-- (source_rank, the registry position that decides a merge, is staged from the row itself.)
ALTER TABLE events ADD COLUMN merge_key VARCHAR;
ALTER TABLE events ADD COLUMN source_rank INTEGER;
