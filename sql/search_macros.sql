-- Run once per query connection; TEMP, since the search database is opened read-only. Great-circle (haversine) distance in km on the contract's sphere,
-- R = 6371.0088 km (the IUGG mean radius); asin's argument is capped at 1, which rounding can
-- exceed for antipodal points. Only geo searches use it, so the centre is never NULL.
CREATE OR REPLACE TEMP MACRO great_circle_km(lat1, lng1, lat2, lng2) AS
  2 * 6371.0088 * asin(least(1.0, sqrt(
    pow(sin(radians(lat2 - lat1) / 2), 2)
    + cos(radians(lat1)) * cos(radians(lat2)) * pow(sin(radians(lng2 - lng1) / 2), 2)
  )));
