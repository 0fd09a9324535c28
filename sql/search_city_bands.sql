-- Each city's latitude band: the least and greatest venue_lat of its events, read once when a query
-- worker opens the snapshot (query/db.ts). A city search adds its cities' band to the city test:
-- venue_lat is the events table's sort order (sql/search_db_events.sql), so the scan skips the
-- blocks outside it by their min/max, which a city_key test alone cannot (string statistics keep
-- only a prefix, and in latitude order every block holds several cities). The band is the city's
-- own extent, so it never drops an event the city test keeps.
SELECT city_key, min(venue_lat) AS lat_lo, max(venue_lat) AS lat_hi
FROM events
GROUP BY city_key
