-- The search database's word table: one row per distinct term of an event's search_text (' w1 w2
-- … ~ t1 t2 …': the folded words of its served text, then the compounds and stems q also matches
-- them by, core/stem.ts), with the event's dates, sorted by word. A q word is a few prefixes, so
-- its events are the rows with word >= p AND word < p's successor for each: ranges the scan
-- prunes to the row groups that hold them (zone maps), where a contains() over every event's text
-- cost 190 ns a row (9.5 ms a search on 50k events, seconds on 10M). The dates ride along so the
-- range filter drops events outside the search's dates before they are joined back by rid.
CREATE TABLE words AS
SELECT DISTINCT word, rid, start_ms, end_ms
FROM (
  SELECT unnest(string_split(trim(search_text), ' ')) AS word, file_row_number::INTEGER AS rid, start_ms, end_ms
  FROM read_parquet({{parquet}}, file_row_number = true)
)
WHERE word <> '~' AND word <> ''
ORDER BY word, start_ms, rid;

-- The snapshot's own words ("did you mean"): the words events say (the part of search_text before
-- ' ~ ', never a stem or a made compound), with how many events say each; only words of letters,
-- three or more, since a suggestion of two letters or a number is no help.
CREATE TABLE vocabulary AS
SELECT word, count(*)::INTEGER AS events
FROM (
  SELECT DISTINCT unnest(string_split(trim(split_part(search_text, ' ~ ', 1)), ' ')) AS word, file_row_number AS rid
  FROM read_parquet({{parquet}}, file_row_number = true)
)
WHERE length(word) >= 3 AND regexp_full_match(word, '\p{L}+')
GROUP BY word
ORDER BY word;
