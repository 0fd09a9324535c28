-- search_text of one event, recomputed from its final fields.
UPDATE events SET search_text = $2 WHERE id = $1;
