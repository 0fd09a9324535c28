-- Loads the previous snapshot's gone.jsonl. A line that is not JSON or misses a field is skipped rather than failing
-- the load: one bad line must not cost the whole list.
-- The path is the previous snapshot's own file and the columns the table's own DESCRIBE, as
-- literals; no request value reaches this file.
INSERT INTO previous_gone
SELECT * FROM read_json({{file}}, format = 'newline_delimited', columns = {{columns}}, ignore_errors = true)
WHERE COLUMNS(*) IS NOT NULL;
