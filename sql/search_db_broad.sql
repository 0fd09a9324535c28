-- The broad searches' postings (snapshot/search-broad.ts), written into search.duckdb after the
-- events and words tables: for each word prefix and city that matches many events, its events with
-- the columns a search filters on, so that such a search never joins the word table back to the
-- events (the semi-join and count(*) OVER () of ~500k matches cost ~300 ms at 1M events) and its
-- total is a sum of precomputed counts less the few events that have ended (query/broad.ts).
-- getvariable('broad_min_events'): the fewest events a key must match to be worth its postings;
-- getvariable('broad_budget'): the most postings the word keys may hold together, broadest first,
-- so the build stays near its old time (both set by snapshot/search-broad.ts).

-- Every term, with how many events hold it (a term is in an event's words once).
CREATE TEMP TABLE broad_terms AS
SELECT word AS term, count(*)::BIGINT AS df FROM words GROUP BY word;

-- Every prefix of three or more letters of a term (shorter q words fall back to the full search),
-- with the terms it starts. Two nested prefixes that start the same terms match the same events
-- exactly, and have the same count of terms and the same first term: the longest of them (the rep)
-- stands for all, so "synt", "synth" and "synthe" share one posting list when no other term
-- starts with "synt". u: the postings its terms hold, at least its events and at most their sum.
CREATE TEMP TABLE broad_prefixes AS
SELECT p, count(*) AS terms, min(term) AS first_term, sum(df) AS u, max(df) AS top
FROM (SELECT left(term, l::INTEGER) AS p, term, df FROM (SELECT unnest(range(3, length(term) + 1)) AS l, term, df FROM broad_terms))
GROUP BY p;

-- everything: a term of the rep is in every event, so the rep matches them all: all such reps
-- ("synth", "district") share key 0, whose postings are the events themselves.
CREATE TEMP TABLE broad_reps AS
SELECT arg_max(p, length(p)) AS rep, any_value(u) AS u, any_value(top) AS top,
       any_value(top) = (SELECT count(*) FROM events) AS everything
FROM broad_prefixes
GROUP BY first_term, terms
HAVING any_value(u) >= getvariable('broad_min_events');

-- Key 0 for the reps that match every event; then the others by their commonest term (the fewest
-- events they match), broadest first, while the rows their terms hold (what the build reads and
-- sorts for them) fit the budget.
CREATE TEMP TABLE broad_chosen AS
SELECT rep, 0 AS key_id FROM broad_reps WHERE everything
UNION ALL
SELECT rep, (row_number() OVER (ORDER BY top DESC, rep))::INTEGER
FROM (SELECT rep, top, sum(u) OVER (ORDER BY top DESC, rep) AS running FROM broad_reps WHERE NOT everything)
WHERE running <= getvariable('broad_budget');

CREATE TEMP TABLE broad_cities AS
SELECT city_key, ((SELECT coalesce(max(key_id), 0) FROM broad_chosen) + row_number() OVER (ORDER BY city_key))::INTEGER AS key_id
FROM events
WHERE city_key IS NOT NULL
GROUP BY city_key
HAVING count(*) >= getvariable('broad_min_events');

-- What a query's prefix or city is looked up by: each prefix names its rep's key.
CREATE TABLE broad_keys AS
SELECT 'word' AS kind, p.p AS key, c.key_id
FROM broad_prefixes p
JOIN broad_prefixes r ON r.first_term = p.first_term AND r.terms = p.terms
JOIN broad_chosen c ON c.rep = r.p
UNION ALL
SELECT 'city', city_key, key_id FROM broad_cities
ORDER BY kind, key;

-- Which key each term's events go to (a term may start several reps: "synth" and "synthe"), made
-- first so the word table meets it in one hash join instead of a prefix test per row and rep.
CREATE TEMP TABLE broad_term_keys AS
SELECT t.term, c.key_id FROM broad_terms t JOIN broad_chosen c ON starts_with(t.term, c.rep) AND c.key_id > 0;

-- One row per (key, event) in the order of a page (ord), so a page is the first matching rows and
-- start_ms rises through each key (zone maps bound "started before"). lo_ms = least(start, end):
-- an event that has ended started no later than its end, so the ended ones lie where lo_ms < now.
CREATE TABLE broad_postings AS
SELECT k.key_id, e.ord, e.rid, e.start_ms, e.end_ms, least(e.start_ms, e.end_ms) AS lo_ms,
       e.age_min_months, e.age_max_months, e.category_bits, e.is_free
FROM (
  SELECT DISTINCT tk.key_id, w.rid FROM words w JOIN broad_term_keys tk ON w.word = tk.term
  UNION ALL
  SELECT 0, rid FROM events WHERE EXISTS (SELECT 1 FROM broad_chosen WHERE key_id = 0)
  UNION ALL
  SELECT c.key_id, e.rid FROM events e JOIN broad_cities c ON e.city_key = c.city_key
) k
JOIN events e ON e.rid = k.rid
ORDER BY k.key_id, e.ord;

-- Each key's events counted per combination of the cheap columns (a few dozen per key) and UTC
-- day of start: the total of a search with no end bound is a key's sum, before the ended events
-- are taken off; with one, the days before the bound's, plus that day's events read one by one.
CREATE TABLE broad_cells AS
SELECT key_id, start_ms // 86400000 AS start_day, age_min_months, age_max_months, category_bits, is_free, count(*)::BIGINT AS n
FROM broad_postings
GROUP BY ALL
ORDER BY key_id, start_day;
