-- "Did you mean": when a search with q finds nothing, the worker (query/db.ts suggest) asks, for
-- each word of q, whether any event has a term it matches at all, and for a word none has, the
-- snapshot's closest word (search.duckdb's vocabulary, sql/search_db_words.sql).

-- query: known
-- Does any term of any event start with this prefix? [$word, $word_next), as a q word's range.
SELECT count(*) > 0 FROM (SELECT 1 FROM words WHERE word >= $word AND word < $word_next LIMIT 1)

-- query: closest
-- The vocabulary's word nearest $word within $max edits (Damerau-Levenshtein: a swapped pair of
-- letters, the commonest typo, is one edit, as "stroytime" → "storytime"); of equally near words
-- the one the most events say, then the first in order, so the answer is the same every time. The
-- length bound lets the scan skip words too long or short to be within reach without measuring them.
SELECT word FROM vocabulary
WHERE length(word) BETWEEN $len - $max AND $len + $max AND damerau_levenshtein(word, $word) <= $max
ORDER BY damerau_levenshtein(word, $word), events DESC, word
LIMIT 1
