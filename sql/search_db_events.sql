-- The search database's event table (snapshot/search-db.ts), written once per snapshot at
-- build time into search.duckdb, which every query worker opens read-only: the table is stored
-- once, compressed, and each worker's buffer pool holds only the blocks its searches touch (loaded
-- into each worker's memory instead, a 10M-event snapshot cost 12 GB of RSS with two workers).
-- Only what a filter or sort reads is kept; served records come from records.jsonl by rid, the
-- Parquet row number. category_bits has bit i set for $slugs[i + 1] (the taxonomy, at most 63
-- slugs): list functions cost more per row than the whole rest of a search, an AND of integers
-- almost nothing. Kept in latitude order: a row group's min/max then prunes place filters (a
-- radius's bounding box; a city), which are what makes searches distinct, while date-only searches
-- are few (week=current, next) and answered from the response cache. Measured on 1M events: a
-- 10 km radius search 25 ms in start order, 8 ms in latitude order; a week 8 ms against 20 ms.
-- ord is the event's rank in (start_ms, id) order, the order of a page: sorting and breaking ties
-- on one integer instead of a string took a city search on 50k events from 3.1 to 2.1 ms, and a
-- search returns no id at all (the worker reads it from the page's records).
-- search_text (' w1 w2 …') serves q within a place filter, whose zone maps leave few rows to test;
-- a q without one uses sql/search_db_words.sql's table instead.
-- updated_ms and id order the change feed (/v1/changes, sql/changes.sql).
-- The read_parquet path is the snapshot's own, as a quoted literal, never request input.
CREATE TABLE events AS
SELECT file_row_number::INTEGER AS rid, id, (row_number() OVER (ORDER BY start_ms, id))::INTEGER AS ord,
       start_ms, end_ms, venue_lat, venue_lng, city_key,
       coalesce(list_sum(list_transform(categories, c -> 1::BIGINT << (list_position($slugs, c) - 1))), 0)::BIGINT AS category_bits,
       is_free, age_min_months, age_max_months, search_text, updated_ms
FROM read_parquet({{parquet}}, file_row_number = true)
ORDER BY venue_lat, start_ms, id;
