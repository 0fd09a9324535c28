-- The usage ledger (LEDGER_DIR/usage.sqlite, by default under DATA_DIR/ledger). Its only writer is the server's metering
-- thread; the command line reads it. One row per organization, key and day (America/Los_Angeles):
-- a month's usage is the sum of its days, so a month rolls over without any write.
CREATE TABLE IF NOT EXISTS usage_days (
  org_id   TEXT NOT NULL,
  key_id   TEXT NOT NULL,
  -- YYYY-MM-DD in America/Los_Angeles.
  day      TEXT NOT NULL,
  records  INTEGER NOT NULL DEFAULT 0 CHECK (records >= 0),
  requests INTEGER NOT NULL DEFAULT 0 CHECK (requests >= 0),
  PRIMARY KEY (org_id, day, key_id)
) STRICT, WITHOUT ROWID;
