-- The events a plan's whole-snapshot export (/v1/export.csv) leaves out: those in any category the
-- plan excludes (the search's own test, sql/search_filters.sql "excluded", turned around).
SELECT rid FROM events WHERE (category_bits & $excluded_bits) <> 0
