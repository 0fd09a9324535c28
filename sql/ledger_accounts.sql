-- The accounts store (LEDGER_DIR/accounts.sqlite, by default under DATA_DIR/ledger): plans, organizations, API keys,
-- and the website's developer accounts (users, sign-in identities, memberships, sessions, sign-in links).
-- Two writers: the operator's command line (keys create, keys revoke, plans set) and the server's
-- metering thread (for the website). Each writes in BEGIN IMMEDIATE transactions; the thread notices
-- the command line's commits through PRAGMA data_version.
-- A file made before a table grew a column is brought up to date by sql/ledger_accounts_upgrade.sql.
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
  -- The e-mail of whoever created it ('' for a website user the identity provider gave none).
  email      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  -- The website user who created it; NULL for a key made by the command line.
  created_by TEXT REFERENCES users (id),
  -- A scheduled revocation (a rolled key's grace period ends): from this instant the key is refused.
  revoke_at  TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS api_keys_org ON api_keys (org_id);

-- Instants in the tables below are ISO 8601 UTC with milliseconds (Date.prototype.toISOString), so
-- that they compare as strings; api_keys keeps its older second-precision form.

-- A developer account. Its e-mail is one the person has proven to own (a spent sign-in link, or an
-- identity provider that says it verified it); NULL when there is none.
CREATE TABLE IF NOT EXISTS users (
  id         TEXT PRIMARY KEY,
  email      TEXT UNIQUE COLLATE NOCASE,
  created_at TEXT NOT NULL
) STRICT;

-- An OpenID Connect identity: the account is keyed by (issuer, subject), never by the e-mail claim.
CREATE TABLE IF NOT EXISTS identities (
  issuer         TEXT NOT NULL,
  subject        TEXT NOT NULL,
  user_id        TEXT NOT NULL REFERENCES users (id),
  -- The claims as last seen, for display: not proof of anything unless email_verified.
  email          TEXT,
  email_verified INTEGER NOT NULL CHECK (email_verified IN (0, 1)),
  created_at     TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
) STRICT;

CREATE TABLE IF NOT EXISTS memberships (
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  user_id    TEXT NOT NULL REFERENCES users (id),
  role       TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, user_id)
) STRICT;

CREATE INDEX IF NOT EXISTS memberships_user ON memberships (user_id);

-- A website session. Only the SHA-256 (hex) of its opaque token is stored.
CREATE TABLE IF NOT EXISTS sessions (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  user_id      TEXT NOT NULL REFERENCES users (id),
  created_at   TEXT NOT NULL,
  -- Refreshed at most once a minute, so idle expiry is exact to within a minute.
  last_seen_at TEXT NOT NULL,
  -- Absolute expiry, however active the session is.
  expires_at   TEXT NOT NULL,
  revoked_at   TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id);

-- A sign-in (or invitation) link's token, stored as its SHA-256 (hex); spent once.
CREATE TABLE IF NOT EXISTS login_tokens (
  token_hash   TEXT PRIMARY KEY,
  email        TEXT NOT NULL,
  purpose      TEXT NOT NULL CHECK (purpose IN ('sign_in', 'invite')),
  -- The organization an invitation is to.
  org_id       TEXT REFERENCES organizations (id),
  -- A hash of a value held by the browser that asked for the link: only that browser may spend it.
  binding_hash TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  used_at      TEXT,
  -- The account that sent an invitation (NULL for a sign-in link): the limits per sender.
  invited_by   TEXT REFERENCES users (id),
  -- The address folded for counting (ledger/mailbox.ts: case, plus-tags, Gmail's dots):
  -- the mail limit is per mailbox, not per spelling. The mail still goes to `email` as given.
  mailbox      TEXT,
  CHECK ((purpose = 'invite') = (org_id IS NOT NULL))
) STRICT;

-- The two plans that ship. INSERT OR IGNORE: an operator's later edits to them are kept.
INSERT OR IGNORE INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ('community', 25, '["festivals","seasonal"]', 1, 60, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
       ('partner', NULL, '[]', 0, 6000, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
