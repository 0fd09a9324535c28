-- Every row that has a copy in another source, grouped for the merge (done in JavaScript, with the
-- same rules as `family-events normalize`). Epoch columns come back as DOUBLE for JSON.
SELECT * REPLACE (start_ms::DOUBLE AS start_ms, end_ms::DOUBLE AS end_ms)
FROM events
WHERE merge_key IN (SELECT merge_key FROM events GROUP BY merge_key HAVING count(*) > 1)
ORDER BY merge_key, source_rank, id;
