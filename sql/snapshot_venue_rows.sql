-- The searchable fields of one place's events, after its spelling was settled: their search_text
-- is recomputed (normalize/event.ts searchText) so q matches the venue name the record shows.
SELECT id, title, summary, description, venue_name, organizer, tags FROM events WHERE venue_key = $1;
