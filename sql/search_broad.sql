-- A search on one broad key (one q prefix, or one city, and nothing else that picks events by
-- place or text), answered from sql/search_db_broad.sql's postings by query/broad.ts. {{filters}}
-- holds sql/search_filters.sql's ages, categories, excluded and is_free fragments: the postings and
-- cells carry those columns under the events table's names. The answer is the one sql/search.sql
-- gives: the same matches, pages in ord order, the same total and earliest end.

-- query: page
-- The first $rows matches in ord order: the postings are stored in that order, so the scan stops
-- once it has them (a LIMIT without ORDER BY keeps the table's order). end_ms bounds the earliest
-- end (stats' $until_ms); start_ms is the last row's half of the next cursor.
SELECT rid, ord, end_ms, start_ms
FROM broad_postings
WHERE key_id = $key AND end_ms >= $from_ms AND start_ms <= $to_ms
  {{filters}}
LIMIT $rows

-- query: stats_open
-- No end bound ('upcoming', or from a time on): the key's events in the cells the filters keep,
-- less those that ended before $from_ms, which all started before it (lo_ms < $from_ms): a few
-- rows at the head of the key, since a snapshot holds little of the past. The earliest end: a
-- match that ends before $until_ms (the end of a match on the page) began before it, so only the
-- head of the key up to $until_ms is read for it.
SELECT (SELECT coalesce(sum(n), 0) FROM broad_cells WHERE key_id = $key {{filters}})
       - (SELECT count(*) FROM broad_postings WHERE key_id = $key AND lo_ms < $from_ms AND end_ms < $from_ms {{filters}}) AS total,
       (SELECT min(end_ms) FROM broad_postings
        WHERE key_id = $key AND lo_ms <= $until_ms AND end_ms >= $from_ms AND start_ms <= $to_ms {{filters}})::DOUBLE AS first_end

-- query: stats_bounded
-- An end bound (a week, a date range): the matches are the events started by $to_ms less those of
-- them that ended before $from_ms. Started by $to_ms: the cells of the days before $to_ms's
-- ($to_day, from $to_day_ms), and that day's events up to $to_ms one by one; ended: as stats_open.
SELECT (SELECT coalesce(sum(n), 0) FROM broad_cells WHERE key_id = $key AND start_day < $to_day {{filters}})
       + (SELECT count(*) FROM broad_postings WHERE key_id = $key AND start_ms >= $to_day_ms AND start_ms <= $to_ms {{filters}})
       - (SELECT count(*) FROM broad_postings WHERE key_id = $key AND lo_ms < $from_ms AND end_ms < $from_ms AND start_ms <= $to_ms {{filters}}) AS total,
       (SELECT min(end_ms) FROM broad_postings
        WHERE key_id = $key AND lo_ms <= $until_ms AND end_ms >= $from_ms AND start_ms <= $to_ms {{filters}})::DOUBLE AS first_end
