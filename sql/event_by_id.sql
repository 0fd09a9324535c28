-- One event by id (/v1/events/{id}, the website's event page and its .ics): its row number in the
-- record store, and whether it is in one of the caller's excluded categories (a plan that never
-- receives festivals must not receive one by id either: the route answers 404 then, not 403, so
-- that an id says nothing about events the plan does not hold).
SELECT rid, (category_bits & $excluded_bits) <> 0 AS excluded
FROM events
WHERE id = $id
LIMIT 1
