-- Removes the copies just merged; their merged records are loaded in their place.
DELETE FROM events WHERE merge_key IN (SELECT merge_key FROM events GROUP BY merge_key HAVING count(*) > 1);
