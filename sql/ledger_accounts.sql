-- The accounts store (LEDGER_DIR/accounts.sqlite, by default under DATA_DIR/ledger): plans, organizations and API keys.
-- Written by the operator's command line (keys create, keys revoke, plans set); the server's
-- metering thread only reads it, and notices each change through PRAGMA data_version.
-- Plans are rows: what a plan changes (cap, exclusions, attribution, request rate) is read from here.
CREATE TABLE IF NOT EXISTS plans (
  name                 TEXT PRIMARY KEY CHECK (name GLOB '[a-z]*' AND length(name) <= 40),
  -- Event records per calendar month (America/Los_Angeles); NULL = no cap.
  monthly_record_limit INTEGER CHECK (monthly_record_limit IS NULL OR monthly_record_limit >= 0),
  -- A JSON array of category slugs whose events never appear in this plan's results.
  excluded_categories  TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(excluded_categories)),
  attribution_required INTEGER NOT NULL CHECK (attribution_required IN (0, 1)),
  -- Live requests a minute per key (a token bucket that refills continuously).
  requests_per_minute  INTEGER NOT NULL CHECK (requests_per_minute >= 1),
  created_at           TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS organizations (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
  plan       TEXT NOT NULL REFERENCES plans (name),
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS api_keys (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  -- SHA-256 of the whole key, hex. The key itself is never stored.
  key_hash   TEXT NOT NULL UNIQUE,
  -- The key's last four characters, so an operator can tell keys apart.
  hint       TEXT NOT NULL,
  -- The developer account that created it.
  email      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS api_keys_org ON api_keys (org_id);

-- The two plans that ship. INSERT OR IGNORE: an operator's later edits to them are kept.
INSERT OR IGNORE INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ('community', 25, '["festivals","seasonal"]', 1, 60, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
       ('partner', NULL, '[]', 0, 6000, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
