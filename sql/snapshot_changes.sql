-- When each record last changed (issue 30): every served field hashed, and the hash compared with
-- the snapshot this build replaces. A record keeps its created_ms always, and its updated_ms while
-- its hash is the same; otherwise both take $stamp, this build's change time, which is later than
-- every stamp the previous snapshot holds (snapshot/build/build.ts), so a change feed ordered by
-- (updated_ms, id) only ever appends. The hash covers exactly the served record's fields (the
-- columns sql/snapshot_records.sql selects): an internal column (search text, source rank) that
-- moves changes nothing a client sees. The read_parquet path is the builder's own previous
-- snapshot, as a quoted literal; no request value reaches this file.

-- query: content
CREATE TEMP TABLE content AS
SELECT id, md5(to_json({
  'title': title, 'description': description, 'summary': summary,
  'start_datetime': start_datetime, 'end_datetime': end_datetime,
  'venue_name': venue_name, 'venue_address': venue_address, 'venue_city': venue_city,
  'venue_lat': venue_lat, 'venue_lng': venue_lng, 'venue_geo_precision': venue_geo_precision,
  'organizer': organizer, 'organizer_url': organizer_url, 'categories': categories, 'tags': tags,
  'image_url': image_url, 'is_free': is_free, 'price_min': price_min, 'price_max': price_max,
  'price_note': price_note, 'ticket_url': ticket_url, 'source': source, 'destination': destination,
  'age_min_months': age_min_months, 'age_max_months': age_max_months, 'is_canceled': is_canceled,
  'all_day': all_day
})::VARCHAR) AS content_hash
FROM events

-- query: carried
CREATE TEMP TABLE changes AS
SELECT c.id, c.content_hash,
       coalesce(p.created_ms, $stamp::BIGINT) AS created_ms,
       CASE WHEN p.content_hash = c.content_hash THEN p.updated_ms ELSE $stamp::BIGINT END AS updated_ms
FROM content c
LEFT JOIN (SELECT id, content_hash, created_ms, updated_ms FROM read_parquet({{previous}})) p USING (id)

-- query: fresh
CREATE TEMP TABLE changes AS
SELECT id, content_hash, $stamp::BIGINT AS created_ms, $stamp::BIGINT AS updated_ms
FROM content
