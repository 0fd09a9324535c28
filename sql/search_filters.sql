-- The pieces sql/search.sql is assembled from, one per "-- fragment: NAME" header. A fragment
-- with {{i}} is repeated once per value (cities are OR-ed inside one AND, words AND-ed), with
-- {{i}} replaced by the value's 1-based position: its parameters are $city_1, $city_2, …

-- fragment: distance_none
NULL::DOUBLE

-- fragment: distance
great_circle_km($lat, $lng, venue_lat, venue_lng)

-- fragment: geo
-- The bounding box first: plain comparisons the scan prunes on; then the exact circle.
AND venue_lat BETWEEN $lat_lo AND $lat_hi AND venue_lng BETWEEN $lng_lo AND $lng_hi
AND great_circle_km($lat, $lng, venue_lat, venue_lng) <= $radius_km

-- fragment: city
city_key = $city_{{i}}

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
-- $word_i is ' ' || the folded word: it must start a word of search_text (' w1 w2 …'). Used with
-- a place filter (city, radius), whose pruned rows are few enough to test each one's text.
AND contains(search_text, $word_{{i}})

-- fragment: word_indexed
-- Without a place filter: the folded word must start a word of the event (sql/search_db_words.sql);
-- its rows are the range [$word_i, $word_i_next), pruned by the word table's order, within the
-- search's dates. A contains() over every event's text cost 190 ns a row.
AND rid IN (
  SELECT rid FROM words
  WHERE word >= $word_{{i}} AND word < $word_{{i}}_next AND end_ms >= $from_ms AND start_ms <= $to_ms
)

-- fragment: order_start
ord

-- fragment: order_distance
great_circle_km($lat, $lng, venue_lat, venue_lng), ord
