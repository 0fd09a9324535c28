-- One search: every filter of the contract, the total, and one page of row numbers, in one round
-- trip. Every value is a parameter; an absent filter is NULL (or, for the bounding box, the whole
-- globe) so one prepared statement serves every combination.
--   $from_ms/$to_ms   overlap range: start <= range end AND end >= range start (end_ms = start
--                     when an event has no end); "not ended yet" is from = now, to = max.
--   $lat_lo..$lng_hi  bounding box of the radius circle: plain comparisons the scan can prune on,
--                     ahead of the exact great-circle test.
--   $age_lo/$age_hi   the child's range in months; events without an age range match any.
--   $categories       any of them; $excluded: the plan's categories, never returned.
--   $words            folded words; each must start a word of search_text (' w1 w2 …').
WITH hits AS (
  SELECT rid, id, start_ms, end_ms, great_circle_km($lat, $lng, venue_lat, venue_lng) AS distance_km
  FROM events
  WHERE end_ms >= $from_ms AND start_ms <= $to_ms
    AND venue_lat BETWEEN $lat_lo AND $lat_hi
    AND venue_lng BETWEEN $lng_lo AND $lng_hi
    AND ($cities IS NULL OR list_contains($cities, city_key))
    AND ($age_lo IS NULL OR age_min_months IS NULL OR (age_min_months <= $age_hi AND age_max_months >= $age_lo))
    AND ($categories IS NULL OR list_has_any(categories, $categories))
    AND NOT list_has_any(categories, $excluded)
    AND ($is_free IS NULL OR is_free = $is_free)
    AND ($words IS NULL OR list_bool_and(list_transform($words, w -> contains(search_text, ' ' || w))))
),
matched AS (
  SELECT * FROM hits WHERE $radius_km IS NULL OR distance_km <= $radius_km
),
page AS (
  SELECT rid, id, start_ms, distance_km FROM matched
  ORDER BY CASE WHEN $by_distance THEN distance_km END, start_ms, id
  LIMIT $limit OFFSET $offset
),
stats AS (
  SELECT count(*)::INTEGER AS total, min(end_ms)::DOUBLE AS first_end FROM matched
)
SELECT stats.total, stats.first_end, page.rid, page.id, page.distance_km
FROM stats LEFT JOIN page ON true
ORDER BY CASE WHEN $by_distance THEN page.distance_km END, page.start_ms, page.id
