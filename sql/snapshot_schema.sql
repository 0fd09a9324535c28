-- The snapshot's one table, as the builder appends it (snapshot/build/write.ts appends in this
-- column order; a test checks the two agree). Public record fields keep the API's names; the
-- rest are filter columns the pipeline precomputes so queries stay plain comparisons.
CREATE TABLE events (
  id              VARCHAR NOT NULL,   -- bsc_evt_…, stable across rebuilds
  title           VARCHAR NOT NULL,
  description     VARCHAR,
  summary         VARCHAR,
  start_datetime  VARCHAR NOT NULL,   -- ISO 8601, America/Los_Angeles offset
  end_datetime    VARCHAR,
  start_ms        BIGINT  NOT NULL,   -- epoch ms of start
  end_ms          BIGINT  NOT NULL,   -- epoch ms of end, or of start when there is no end
  venue_key       VARCHAR NOT NULL,
  venue_name      VARCHAR NOT NULL,
  venue_address   VARCHAR NOT NULL,
  venue_city      VARCHAR NOT NULL,
  venue_lat       DOUBLE  NOT NULL,
  venue_lng       DOUBLE  NOT NULL,
  venue_geo_precision VARCHAR NOT NULL, -- exact | venue | zip | place: where the coordinates come from
  organizer       VARCHAR,
  organizer_url   VARCHAR,
  categories      VARCHAR[] NOT NULL,
  tags            VARCHAR[] NOT NULL,
  image_url       VARCHAR,
  is_free         BOOLEAN NOT NULL,
  price_min       DOUBLE,
  price_max       DOUBLE,
  price_note      VARCHAR,
  ticket_url      VARCHAR,
  source          VARCHAR,
  destination     VARCHAR NOT NULL,
  age_min_months  INTEGER,
  age_max_months  INTEGER,
  is_canceled     BOOLEAN NOT NULL,
  all_day         BOOLEAN NOT NULL,   -- upstream gave a date without a time: midnight to 23:59:59 of the last day
  city_key        VARCHAR NOT NULL,   -- folded city name: what the city filter compares
  search_text     VARCHAR NOT NULL,   -- ' w1 w2 …' folded words; q matches ' ' || prefix
  source_id       VARCHAR NOT NULL    -- registry id (internal, never served)
);
