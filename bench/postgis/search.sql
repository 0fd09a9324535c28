-- Every search of the benchmark mix on PostgreSQL + PostGIS, with the same filter semantics as
-- sql/search.sql, answered as one JSON document like our envelope (records by event_json,
-- functions.sql). Used by every PostGIS peer: bench/lib/postgis.ts wraps it into pgbench scripts
-- (the distinct mix reads each request's values from the bench_mix table with \gset; the repeated
-- search has its values written in) and renders it for psql to compare answers; the Fastify + pg peer
-- binds the same names as $n parameters. Variables:
--   from_ms, to_ms   overlap range (upcoming: now and the far future; week: Monday to Sunday, LA)
--   has_geo, lat, lng, radius   a circle (sphere, as the contract's great-circle distance), 0/1 flag
--   city_key         folded city name, or '' for any
--   word             a folded word that must start a word of search_text, or '' for none
--   has_ages, age_lo, age_hi    the child's range in months, 0/1 flag
--   cat              one category slug, or '' for any
--   excluded         the plan's excluded categories, comma-separated
--   off, web         offset (limit is 20) and WEB_BASE_URL
-- Unused filters are written as "flag = 0 OR ..." rather than left out: with custom plans
-- (plan_cache_mode = force_custom_plan, as both peers run it) PostgreSQL folds the flag and keeps
-- only the filters a search uses, so each still gets its index (GiST, btree, trigram).
-- The matches are collected on narrow rows first (MATERIALIZED: otherwise the planner, seeing
-- LIMIT 20, may walk the start_ms index through the whole table, not knowing the total must count
-- every match: 3 s instead of 20 ms at 1M rows), counted once, and only the page's records are
-- read whole. The total comes from the matches, not the page, so a page past the end still has it.
WITH centre AS (
  SELECT ST_SetSRID(ST_MakePoint((:lng)::float8, (:lat)::float8), 4326)::geography AS pt
),
matched AS MATERIALIZED (
  SELECT e.id, e.start_ms,
         CASE WHEN (:has_geo)::int = 1 THEN ST_Distance(e.geog, centre.pt, false) / 1000 END AS distance_km
  FROM events e, centre
  WHERE e.end_ms >= (:from_ms)::bigint AND e.start_ms <= (:to_ms)::bigint
    AND ((:has_geo)::int = 0 OR ST_DWithin(e.geog, centre.pt, (:radius)::float8 * 1000, false))
    AND ((:city_key)::text = '' OR e.city_key = (:city_key)::text)
    AND ((:word)::text = '' OR e.search_text LIKE '% ' || (:word)::text || '%')
    AND ((:has_ages)::int = 0 OR e.age_min_months IS NULL OR (e.age_min_months <= (:age_hi)::int AND e.age_max_months >= (:age_lo)::int))
    AND ((:cat)::text = '' OR e.categories && ARRAY[(:cat)::text])
    AND NOT e.categories && string_to_array((:excluded)::text, ',')
),
counted AS (
  SELECT count(*) AS total FROM matched
),
page AS (
  SELECT id, start_ms, distance_km FROM matched
  ORDER BY start_ms, id
  LIMIT 20 OFFSET (:off)::int
)
SELECT json_build_object(
  'events', coalesce(json_agg(event_json(e, (:web)::text, page.distance_km) ORDER BY page.start_ms, page.id), '[]'::json),
  'total', (SELECT total FROM counted),
  'limit', 20,
  'offset', (:off)::int,
  'next_offset', CASE WHEN (:off)::int + 20 < (SELECT total FROM counted) THEN (:off)::int + 20 END
)
FROM page JOIN events e ON e.id = page.id;
