-- One event as our JSON envelope carries it (the contract's record), for every PostGIS peer: the
-- pgbench scripts (distinct.sql, repeated.sql) and the Fastify + pg server (bench/peers). Created in
-- each dataset's schema next to its events table by bench/lib/postgis.ts. A LANGUAGE sql, STABLE,
-- single-expression function is inlined by the planner into the query that calls it, so it costs
-- what the expression written out in each script cost; EXPLAIN VERBOSE shows no function call.
-- distance_km is always present (null outside geo searches), where our API omits the key: a few
-- bytes per record, and not what the comparison measures.
CREATE OR REPLACE FUNCTION event_json(e events, web text, distance_km double precision) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT json_build_object(
    'id', e.id, 'title', e.title, 'description', e.description, 'summary', e.summary,
    'start_datetime', e.start_datetime, 'end_datetime', e.end_datetime,
    'venue', json_build_object('name', e.venue_name, 'address', e.venue_address, 'city', e.venue_city, 'lat', e.venue_lat, 'lng', e.venue_lng, 'geo_precision', e.venue_geo_precision),
    'organizer', e.organizer, 'organizer_url', e.organizer_url, 'categories', e.categories, 'tags', e.tags,
    'image_url', e.image_url, 'is_free', e.is_free,
    'price', CASE WHEN e.price_min IS NULL AND e.price_max IS NULL AND e.price_note IS NULL THEN NULL
                  ELSE json_build_object('min', e.price_min, 'max', e.price_max, 'note', e.price_note) END,
    'ticket_url', e.ticket_url, 'source', e.source, 'source_url', NULL, 'destination', e.destination,
    'age_range', CASE WHEN e.age_min_months IS NULL OR e.age_max_months IS NULL THEN NULL
                      ELSE json_build_object('min_months', e.age_min_months, 'max_months', e.age_max_months) END,
    'age_range_years', CASE WHEN e.age_min_months IS NULL OR e.age_max_months IS NULL THEN NULL
                            ELSE json_build_object('min_years', e.age_min_months / 12, 'max_years', e.age_max_months / 12) END,
    'is_canceled', e.is_canceled, 'all_day', e.all_day,
    'event_url', web || '/events/' || e.id,
    'distance_km', round(distance_km::numeric, 3)
  )
$$;
