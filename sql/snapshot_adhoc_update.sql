-- One spelling per ad-hoc place.
UPDATE events SET venue_name = $2, venue_address = $3, venue_lat = $4, venue_lng = $5, venue_geo_precision = $6 WHERE venue_key = $1;
