-- `family-events ledger copy --from sqlite --to postgres` (cli/ledger-copy.ts): the embedded
-- ledger's rows, read by sql/ledger_queries.sql's copy_* statements, written here in one
-- transaction. Each statement takes a chunk of rows as one JSON array ($rows) of the SQLite rows
-- as they are, and converts here: TEXT instants to timestamptz, 0/1 to boolean, JSON text to jsonb.

-- query: copy_lock
-- No node writes while the copy checks that the target is empty and fills it; readers go on.
LOCK TABLE plans, organizations, users, api_keys, identities, memberships, sessions, login_tokens, login_codes, usage_days IN EXCLUSIVE MODE

-- query: copy_counts
SELECT (SELECT count(*) FROM plans WHERE name = ANY($plan_names::text[])) AS plans,
       (SELECT count(*) FROM organizations) AS organizations,
       (SELECT count(*) FROM users) AS users,
       (SELECT count(*) FROM api_keys) AS api_keys,
       (SELECT count(*) FROM identities) AS identities,
       (SELECT count(*) FROM memberships) AS memberships,
       (SELECT count(*) FROM sessions) AS sessions,
       (SELECT count(*) FROM login_tokens) AS login_tokens,
       (SELECT count(*) FROM login_codes) AS login_codes,
       (SELECT count(*) FROM usage_days) AS usage_days

-- query: copy_usage_totals
SELECT org_id, sum(records) AS records, sum(requests) AS requests FROM usage_days GROUP BY org_id ORDER BY org_id COLLATE "C"

-- query: copy_plans
-- The copied ledger's plans win over the shipped ones the migration seeded.
INSERT INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
SELECT r.name, r.monthly_record_limit, r.excluded_categories::jsonb, r.attribution_required <> 0, r.requests_per_minute, r.created_at
FROM jsonb_to_recordset($rows::jsonb) AS r(name text, monthly_record_limit bigint, excluded_categories text, attribution_required integer, requests_per_minute integer, created_at timestamptz)
ON CONFLICT (name) DO UPDATE SET
  monthly_record_limit = excluded.monthly_record_limit,
  excluded_categories  = excluded.excluded_categories,
  attribution_required = excluded.attribution_required,
  requests_per_minute  = excluded.requests_per_minute,
  created_at           = excluded.created_at

-- query: copy_organizations
INSERT INTO organizations (id, name, plan, created_at)
SELECT r.id, r.name, r.plan, r.created_at
FROM jsonb_to_recordset($rows::jsonb) AS r(id text, name text, plan text, created_at timestamptz)

-- query: copy_users
INSERT INTO users (id, email, created_at)
SELECT r.id, r.email, r.created_at
FROM jsonb_to_recordset($rows::jsonb) AS r(id text, email text, created_at timestamptz)

-- query: copy_api_keys
-- In the order given ($rows is in the files' insertion order): seq numbers them in that order.
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at, revoked_at, created_by, revoke_at)
SELECT r.id, r.org_id, r.key_hash, r.hint, r.email, r.created_at, r.revoked_at, r.created_by, r.revoke_at
FROM ROWS FROM (jsonb_to_recordset($rows::jsonb)
  AS (id text, org_id text, key_hash text, hint text, email text, created_at timestamptz, revoked_at timestamptz, created_by text, revoke_at timestamptz))
  WITH ORDINALITY AS r(id, org_id, key_hash, hint, email, created_at, revoked_at, created_by, revoke_at, ord)
ORDER BY r.ord

-- query: copy_identities
INSERT INTO identities (issuer, subject, user_id, email, email_verified, created_at)
SELECT r.issuer, r.subject, r.user_id, r.email, r.email_verified <> 0, r.created_at
FROM jsonb_to_recordset($rows::jsonb) AS r(issuer text, subject text, user_id text, email text, email_verified integer, created_at timestamptz)

-- query: copy_memberships
INSERT INTO memberships (org_id, user_id, role, created_at)
SELECT r.org_id, r.user_id, r.role, r.created_at
FROM jsonb_to_recordset($rows::jsonb) AS r(org_id text, user_id text, role text, created_at timestamptz)

-- query: copy_sessions
INSERT INTO sessions (id, token_hash, user_id, created_at, last_seen_at, expires_at, revoked_at)
SELECT r.id, r.token_hash, r.user_id, r.created_at, r.last_seen_at, r.expires_at, r.revoked_at
FROM jsonb_to_recordset($rows::jsonb) AS r(id text, token_hash text, user_id text, created_at timestamptz, last_seen_at timestamptz, expires_at timestamptz, revoked_at timestamptz)

-- query: copy_login_tokens
INSERT INTO login_tokens (token_hash, email, purpose, org_id, binding_hash, created_at, expires_at, used_at, invited_by, mailbox)
SELECT r.token_hash, r.email, r.purpose, r.org_id, r.binding_hash, r.created_at, r.expires_at, r.used_at, r.invited_by, coalesce(r.mailbox, lower(r.email))
FROM jsonb_to_recordset($rows::jsonb) AS r(token_hash text, email text, purpose text, org_id text, binding_hash text, created_at timestamptz, expires_at timestamptz, used_at timestamptz, invited_by text, mailbox text)

-- query: copy_login_codes
-- After copy_login_tokens: each code belongs to its link (and goes with it).
INSERT INTO login_codes (token_hash, binding_hash, code_hash, attempts)
SELECT r.token_hash, r.binding_hash, r.code_hash, r.attempts
FROM jsonb_to_recordset($rows::jsonb) AS r(token_hash text, binding_hash text, code_hash text, attempts integer)

-- query: copy_usage_days
INSERT INTO usage_days (org_id, key_id, day, records, requests)
SELECT r.org_id, r.key_id, r.day, r.records, r.requests
FROM jsonb_to_recordset($rows::jsonb) AS r(org_id text, key_id text, day date, records bigint, requests bigint)
