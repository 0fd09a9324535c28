-- The pieces sql/search.sql is assembled from, one per "-- fragment: NAME" header. A fragment
-- with {{i}} is repeated once per value (cities are OR-ed inside one AND, words AND-ed), with
-- {{i}} replaced by the value's 1-based position: its parameters are $city_1, $city_2, …

-- fragment: place_none
NULL::DOUBLE AS venue_lat, NULL::DOUBLE AS venue_lng

-- fragment: place
-- The page's distances are computed from these by the worker (query/db.ts greatCircleKm), for 20
-- rows, instead of by the statement: every expression in it is bound and optimized again on every
-- execution, and the great-circle one was a third of a radius search's cost on 50k events.
venue_lat, venue_lng

-- fragment: hav_none
NULL::DOUBLE

-- fragment: haversine
-- The haversine term of the great circle from ($lat, $lng) (sql/search_macros.sql's, with the
-- centre's cosine a parameter): the distance is 2R asin(sqrt(h)), which grows with h, so
-- "within the radius" is h <= $hav_max (sin²(radius / 2R)) and the distance order is h's order.
pow(sin(radians(venue_lat - $lat) / 2), 2) + $cos_lat * cos(radians(venue_lat)) * pow(sin(radians(venue_lng - $lng) / 2), 2)

-- fragment: geo
-- The bounding box first: plain comparisons the scan prunes on; then the exact circle.
AND venue_lat BETWEEN $lat_lo AND $lat_hi AND venue_lng BETWEEN $lng_lo AND $lng_hi
AND {{haversine}} <= $hav_max

-- fragment: city
city_key = $city_{{i}}

-- fragment: city_band
-- The searched cities' latitude band (sql/search_city_bands.sql): blocks outside it are skipped.
AND venue_lat BETWEEN $city_lat_lo AND $city_lat_hi

-- fragment: ages
-- Events without an age range are for all ages.
AND (age_min_months IS NULL OR (age_min_months <= $age_hi AND age_max_months >= $age_lo))

-- fragment: categories
AND (category_bits & $category_bits) <> 0

-- fragment: excluded
AND (category_bits & $excluded_bits) = 0

-- fragment: is_free
AND is_free = $is_free

-- fragment: word
-- Each of $word_i_j is ' ' || a prefix of q's word i (core/stem.ts queryForms: the word, its stem,
-- its compounds with its neighbours): one must start a term of search_text (' w1 w2 … ~ t1 …').
-- Used with a place filter (city, radius), whose pruned rows are few enough to test each one's text.
AND ({{forms}})

-- fragment: word_form
contains(search_text, $word_{{i}}_{{j}})

-- fragment: word_indexed
-- Without a place filter: one of word i's prefixes must start a term of the event
-- (sql/search_db_words.sql); each prefix's rows are the range [$word_i_j, $word_i_j_next), pruned
-- by the word table's order, within the search's dates. One scan per prefix, joined by UNION ALL:
-- each keeps its own range for the zone maps, which an OR of ranges in one scan would not.
-- A contains() over every event's text cost 190 ns a row.
AND rid IN (
  {{forms}}
)

-- fragment: word_indexed_form
SELECT rid FROM words
WHERE word >= $word_{{i}}_{{j}} AND word < $word_{{i}}_{{j}}_next AND end_ms >= $from_ms AND start_ms <= $to_ms

-- fragment: order_start
ord

-- fragment: order_distance
-- hav: the select list's haversine term (sql/search.sql), bound once for both.
hav, ord

-- fragment: after
-- After the cursor's key in (start_ms, id) order: values, not ord, which is one snapshot's numbering.
(start_ms > $after_start OR (start_ms = $after_start AND id > $after_id))

-- fragment: remaining_none
NULL::INTEGER

-- fragment: remaining_after
sum(CASE WHEN {{after}} THEN 1 ELSE 0 END) OVER ()::INTEGER

-- fragment: qualify_after
QUALIFY {{after}}
