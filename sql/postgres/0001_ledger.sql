-- The shared ledger in PostgreSQL (DATABASE_URL): what the embedded ledger keeps in
-- LEDGER_DIR/accounts.sqlite and usage.sqlite, for several API nodes at once. Applied once, at
-- start-up or by `family-events ledger migrate`, under an advisory lock (ledger/postgres/migrate.ts).
-- Instants are timestamptz; the code reads them back as ISO 8601 strings, as the SQLite files store them.

CREATE TABLE plans (
  name                 text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_-]*$' AND length(name) <= 40),
  -- Event records per calendar month (America/Los_Angeles); NULL = no cap.
  monthly_record_limit bigint CHECK (monthly_record_limit IS NULL OR monthly_record_limit >= 0),
  -- Category slugs whose events never appear in this plan's results.
  excluded_categories  jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(excluded_categories) = 'array'),
  attribution_required boolean NOT NULL,
  -- Live requests a minute per key, on each API node (see README › Deployment).
  requests_per_minute  integer NOT NULL CHECK (requests_per_minute >= 1),
  created_at           timestamptz NOT NULL
);

CREATE TABLE organizations (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  plan       text NOT NULL REFERENCES plans (name),
  created_at timestamptz NOT NULL
);
-- Names are unique without regard to case, as in the embedded ledger (COLLATE NOCASE).
CREATE UNIQUE INDEX organizations_name ON organizations (lower(name));

CREATE TABLE users (
  id         text PRIMARY KEY,
  email      text,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES organizations (id),
  -- SHA-256 of the whole key, hex. The key itself is never stored.
  key_hash   text NOT NULL UNIQUE,
  hint       text NOT NULL,
  email      text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_by text REFERENCES users (id),
  -- A scheduled revocation (a rolled key's grace period ends).
  revoke_at  timestamptz,
  -- Insertion order, to list keys made within the same instant newest first.
  seq        bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX api_keys_org ON api_keys (org_id);

CREATE TABLE identities (
  issuer         text NOT NULL,
  subject        text NOT NULL,
  user_id        text NOT NULL REFERENCES users (id),
  email          text,
  email_verified boolean NOT NULL,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (issuer, subject)
);

CREATE TABLE memberships (
  org_id     text NOT NULL REFERENCES organizations (id),
  user_id    text NOT NULL REFERENCES users (id),
  role       text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE sessions (
  id           text PRIMARY KEY,
  token_hash   text NOT NULL UNIQUE,
  user_id      text NOT NULL REFERENCES users (id),
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE login_tokens (
  token_hash   text PRIMARY KEY,
  email        text NOT NULL,
  purpose      text NOT NULL CHECK (purpose IN ('sign_in', 'invite')),
  org_id       text REFERENCES organizations (id),
  binding_hash text NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  CHECK ((purpose = 'invite') = (org_id IS NOT NULL))
);

-- Usage: one row per key and day (America/Los_Angeles); a month is the sum of its days.
CREATE TABLE usage_days (
  org_id   text NOT NULL,
  key_id   text NOT NULL,
  day      date NOT NULL,
  records  bigint NOT NULL DEFAULT 0 CHECK (records >= 0),
  requests bigint NOT NULL DEFAULT 0 CHECK (requests >= 0),
  PRIMARY KEY (org_id, day, key_id)
);

-- Records set aside for answers being computed on some node. A hold counts against the cap until
-- it is charged, released, or expires: a node that dies holding records gives them back when its
-- holds expire, and a charge against an expired hold is refused (its records may be someone else's).
CREATE TABLE quota_holds (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id     text NOT NULL,
  key_id     text NOT NULL,
  amount     bigint NOT NULL CHECK (amount > 0),
  node       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX quota_holds_org ON quota_holds (org_id, expires_at);

-- The snapshot every node answers from (one row): the builder records it after publishing.
CREATE TABLE current_snapshot (
  only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  snapshot_id  text NOT NULL,
  published_at timestamptz NOT NULL
);

-- The two plans that ship. An operator's later edits to them are kept.
INSERT INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ('community', 25, '["festivals","seasonal"]', true, 60, now()),
       ('partner', NULL, '[]', false, 6000, now())
ON CONFLICT (name) DO NOTHING;
