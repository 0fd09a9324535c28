-- A q word of two prefixes on the broad postings (snapshot/search-broad.ts writePairs).

-- query: outside
-- Key $a's events that key $b does not hold: none, and $b's postings answer the pair exactly.
SELECT count(*) FROM broad_postings a
WHERE a.key_id = $a AND NOT EXISTS (SELECT 1 FROM broad_postings b WHERE b.key_id = $b AND b.rid = a.rid)

-- query: insert
INSERT INTO broad_keys VALUES ('pair', $key, $key_id)
