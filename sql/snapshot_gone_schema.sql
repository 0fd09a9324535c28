-- The previous snapshot's gone list, loaded from its gone.jsonl (snapshot/gone.ts). The
-- columns are GoneEvent's (query/protocol.ts), in its order; the loader reads them back with DESCRIBE.
CREATE TABLE previous_gone (
  id              VARCHAR NOT NULL,
  title           VARCHAR NOT NULL,
  start_datetime  VARCHAR NOT NULL,
  venue_city      VARCHAR NOT NULL,
  categories      VARCHAR[] NOT NULL,
  removed_at      VARCHAR NOT NULL   -- build time (ISO) of the first snapshot without it
);
