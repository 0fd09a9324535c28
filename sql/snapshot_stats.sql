-- The manifest's counts, from the assembled table.
SELECT
  (SELECT count(*) FROM events)::INTEGER AS events,
  (SELECT count(DISTINCT venue_key) FROM events)::INTEGER AS venues,
  (SELECT coalesce(list(DISTINCT venue_city ORDER BY venue_city), []) FROM events) AS cities,
  (SELECT coalesce(list(DISTINCT destination ORDER BY destination), []) FROM events) AS destinations,
  (SELECT coalesce(json_group_object(c, n), '{}') FROM (SELECT c, count(*)::INTEGER AS n FROM (SELECT unnest(categories) AS c FROM events) GROUP BY c)) AS categories,
  (SELECT coalesce(json_group_object(source_id, n), '{}') FROM (SELECT source_id, count(*)::INTEGER AS n FROM events GROUP BY source_id)) AS kept;
