-- PostGIS counterpart of scenario "distinct" (bench/wrk/distinct.lua): the same distributions
-- (micro-degree lat/lng in the data's bounding box, radius 2-15 km, ages, one allowed category,
-- offset 0-40) and the same filter semantics as sql/search.sql, answered as one JSON document
-- like our envelope. Run by bench/postgis.ts with pgbench -M prepared; the -D variables are:
--   lat_lo_u lat_hi_u lng_lo_u lng_hi_u (micro-degrees), ncats, cats (comma-separated slugs),
--   excluded (the plan's categories, comma-separated), now_ms, web (WEB_BASE_URL).
-- The sphere (use_spheroid = false) matches the contract's great-circle distance.
-- Written as a tuned deployment would: the matches are collected on narrow rows first
-- (MATERIALIZED: otherwise the planner, seeing LIMIT 20, may walk the start_ms index through the
-- whole table, not knowing count(*) OVER () must see every match: 3 s instead of 20 ms at 1M
-- rows), and only the page's 20 records are read whole.
\set lat random(:lat_lo_u, :lat_hi_u)
\set lng random(:lng_lo_u, :lng_hi_u)
\set radius random(2, 15)
\set age_min random(0, 12)
\set age_max least(:age_min + random(0, 6), 18)
\set cat random(1, :ncats)
\set off random(0, 40)
WITH centre AS (
  SELECT ST_SetSRID(ST_MakePoint((:lng)::float8 / 1e6, (:lat)::float8 / 1e6), 4326)::geography AS pt
),
matched AS MATERIALIZED (
  SELECT e.id, e.start_ms, ST_Distance(e.geog, centre.pt, false) / 1000 AS distance_km
  FROM events e, centre
  WHERE ST_DWithin(e.geog, centre.pt, (:radius)::float8 * 1000, false)
    AND e.end_ms >= (:now_ms)::bigint
    AND (e.age_min_months IS NULL OR (e.age_min_months <= (:age_max)::int * 12 + 11 AND e.age_max_months >= (:age_min)::int * 12))
    AND e.categories && ARRAY[split_part(:cats, ',', (:cat)::int)]
    AND NOT e.categories && string_to_array(:excluded, ',')
),
page AS (
  SELECT id, start_ms, distance_km, count(*) OVER () AS total FROM matched
  ORDER BY start_ms, id
  LIMIT 20 OFFSET (:off)::int
)
SELECT json_build_object(
  'events', coalesce(json_agg(json_build_object(
    'id', e.id, 'title', e.title, 'description', e.description, 'summary', e.summary,
    'start_datetime', e.start_datetime, 'end_datetime', e.end_datetime,
    'venue', json_build_object('name', e.venue_name, 'address', e.venue_address, 'city', e.venue_city, 'lat', e.venue_lat, 'lng', e.venue_lng),
    'organizer', e.organizer, 'organizer_url', e.organizer_url, 'categories', e.categories, 'tags', e.tags,
    'image_url', e.image_url, 'is_free', e.is_free,
    'price', CASE WHEN e.price_min IS NULL AND e.price_max IS NULL AND e.price_note IS NULL THEN NULL
                  ELSE json_build_object('min', e.price_min, 'max', e.price_max, 'note', e.price_note) END,
    'ticket_url', e.ticket_url, 'source', e.source, 'source_url', NULL, 'destination', e.destination,
    'age_range', CASE WHEN e.age_min_months IS NULL OR e.age_max_months IS NULL THEN NULL
                      ELSE json_build_object('min_months', e.age_min_months, 'max_months', e.age_max_months) END,
    'age_range_years', CASE WHEN e.age_min_months IS NULL OR e.age_max_months IS NULL THEN NULL
                            ELSE json_build_object('min_years', e.age_min_months / 12, 'max_years', e.age_max_months / 12) END,
    'is_canceled', e.is_canceled,
    'event_url', (:web)::text || '/events/' || e.id,
    'distance_km', round(page.distance_km::numeric, 3)
  ) ORDER BY page.start_ms, page.id), '[]'::json),
  'total', max(page.total),
  'limit', 20,
  'offset', (:off)::int,
  'next_offset', CASE WHEN (:off)::int + 20 < max(page.total) THEN (:off)::int + 20 END
)
FROM page JOIN events e ON e.id = page.id;
