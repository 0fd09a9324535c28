-- Reads the published Parquet back in file order so records.jsonl line N is Parquet row N (the
-- row number a search returns). Selects exactly the columns of a served record (RecordRow).
-- The read_parquet path is the builder's own output, as a quoted literal; no request value reaches this file.
SELECT id, title, description, summary, start_datetime, end_datetime, venue_name, venue_address,
       venue_city, venue_lat, venue_lng, venue_geo_precision, organizer, organizer_url, categories, tags, image_url,
       is_free, price_min, price_max, price_note, ticket_url, source, destination,
       age_min_months, age_max_months, is_canceled, all_day, created_ms::DOUBLE AS created_ms, updated_ms::DOUBLE AS updated_ms
FROM read_parquet({{parquet}}, file_row_number = true)
ORDER BY file_row_number
