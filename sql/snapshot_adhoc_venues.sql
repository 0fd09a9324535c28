-- How events spell each place the gazetteer does not know, and how often.
SELECT venue_key, venue_name, venue_address, venue_lat, venue_lng, venue_geo_precision, count(*)::INTEGER AS n
FROM events
WHERE starts_with(venue_key, 'adhoc:')
GROUP BY ALL;
