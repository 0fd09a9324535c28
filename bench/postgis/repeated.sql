-- PostGIS counterpart of scenario "repeated": one fixed search (the city with the most events,
-- ages 3-6, limit 20), the same filter semantics as sql/search.sql, answered as one JSON document
-- like our envelope. PostgreSQL has no response cache: this is its plan and buffer caches at work.
-- Run by bench/postgis.ts with pgbench -M prepared; the -D variables are:
--   city_key (folded city name), excluded (comma-separated), now_ms, web (WEB_BASE_URL).
-- As in distinct.sql, the matches are collected on narrow rows first (MATERIALIZED, see there)
-- and only the page's 20 records are read whole.
WITH matched AS MATERIALIZED (
  SELECT e.id, e.start_ms
  FROM events e
  WHERE e.city_key = (:city_key)::text
    AND e.end_ms >= (:now_ms)::bigint
    AND (e.age_min_months IS NULL OR (e.age_min_months <= 6 * 12 + 11 AND e.age_max_months >= 3 * 12))
    AND NOT e.categories && string_to_array(:excluded, ',')
),
page AS (
  SELECT id, start_ms, count(*) OVER () AS total FROM matched
  ORDER BY start_ms, id
  LIMIT 20
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
    'event_url', (:web)::text || '/events/' || e.id
  ) ORDER BY page.start_ms, page.id), '[]'::json),
  'total', max(page.total),
  'limit', 20,
  'offset', 0,
  'next_offset', CASE WHEN 0 + 20 < max(page.total) THEN 0 + 20 END
)
FROM page JOIN events e ON e.id = page.id;
