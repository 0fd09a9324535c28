-- Every statement the metering thread and the command line run on the two ledger files, one per
-- "-- query: NAME" header; values only through parameters.

-- query: plans
SELECT name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute
FROM plans ORDER BY name

-- query: plan_upsert
INSERT INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ($name, $monthly_record_limit, $excluded_categories, $attribution_required, $requests_per_minute, $now)
ON CONFLICT (name) DO UPDATE SET
  monthly_record_limit = excluded.monthly_record_limit,
  excluded_categories  = excluded.excluded_categories,
  attribution_required = excluded.attribution_required,
  requests_per_minute  = excluded.requests_per_minute

-- query: organizations
SELECT id, name, plan, created_at FROM organizations ORDER BY created_at, id

-- query: organization_by_name
SELECT id, name, plan, created_at FROM organizations WHERE name = $name

-- query: organization_by_id
SELECT id, name, plan, created_at FROM organizations WHERE id = $id

-- query: organization_insert
INSERT INTO organizations (id, name, plan, created_at) VALUES ($id, $name, $plan, $now)

-- query: organization_set_plan
UPDATE organizations SET plan = $plan WHERE id = $id

-- query: keys
SELECT k.id, k.org_id, o.name AS org_name, k.key_hash, k.hint, k.email, k.created_at, k.revoked_at, k.revoke_at, k.created_by
FROM api_keys k JOIN organizations o ON o.id = k.org_id
ORDER BY k.created_at, k.id

-- query: key_insert
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at) VALUES ($id, $org_id, $key_hash, $hint, $email, $now)

-- query: key_by_hash
SELECT id FROM api_keys WHERE key_hash = $key_hash

-- query: key_revoke
UPDATE api_keys SET revoked_at = $now WHERE id = $id AND revoked_at IS NULL

-- query: key_insert_by_user
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at, created_by)
VALUES ($id, $org_id, $key_hash, $hint, $email, $now, $created_by)

-- query: keys_of_org
SELECT id, hint, created_at, revoked_at, revoke_at, created_by FROM api_keys WHERE org_id = $org_id
-- created_at is to the second: within one, the later insert (rowid) is the newer key.
ORDER BY created_at DESC, rowid DESC

-- query: key_of_org
SELECT id, revoked_at, revoke_at FROM api_keys WHERE id = $id AND org_id = $org_id

-- query: key_revoke_in_org
UPDATE api_keys SET revoked_at = $now WHERE id = $id AND org_id = $org_id AND revoked_at IS NULL

-- query: key_schedule_revoke
UPDATE api_keys SET revoke_at = $revoke_at WHERE id = $id

-- query: user_by_id
SELECT id, email, created_at FROM users WHERE id = $id

-- query: user_by_email
SELECT id, email, created_at FROM users WHERE email = $email

-- query: user_insert
INSERT INTO users (id, email, created_at) VALUES ($id, $email, $now)

-- query: identity_get
SELECT user_id FROM identities WHERE issuer = $issuer AND subject = $subject

-- query: identity_insert
INSERT INTO identities (issuer, subject, user_id, email, email_verified, created_at)
VALUES ($issuer, $subject, $user_id, $email, $email_verified, $now)

-- query: identity_update_claims
UPDATE identities SET email = $email, email_verified = $email_verified WHERE issuer = $issuer AND subject = $subject

-- query: membership_insert
INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($org_id, $user_id, $role, $now)
ON CONFLICT (org_id, user_id) DO NOTHING

-- query: membership_get
SELECT role FROM memberships WHERE org_id = $org_id AND user_id = $user_id

-- query: organizations_of_user
-- Owner first: an account's own organization and one it joins can share a millisecond, and a
-- tie broken by random id made the order differ from run to run.
SELECT o.id, o.name, o.plan, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
WHERE m.user_id = $user_id ORDER BY CASE m.role WHEN 'owner' THEN 0 ELSE 1 END, m.created_at, o.id

-- query: members_of_org
SELECT u.id AS user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.org_id = $org_id ORDER BY CASE m.role WHEN 'owner' THEN 0 ELSE 1 END, m.created_at, u.id

-- query: session_insert
INSERT INTO sessions (id, token_hash, user_id, created_at, last_seen_at, expires_at)
VALUES ($id, $token_hash, $user_id, $now, $now, $expires_at)

-- query: session_by_token
SELECT id, user_id, last_seen_at, expires_at, revoked_at FROM sessions WHERE token_hash = $token_hash

-- query: session_seen
UPDATE sessions SET last_seen_at = $now WHERE id = $id

-- query: session_end
UPDATE sessions SET revoked_at = $now WHERE token_hash = $token_hash AND revoked_at IS NULL

-- query: sessions_end_all
UPDATE sessions SET revoked_at = $now WHERE user_id = $user_id AND revoked_at IS NULL

-- query: login_token_insert
INSERT INTO login_tokens (token_hash, email, purpose, org_id, binding_hash, created_at, expires_at, invited_by, mailbox)
VALUES ($token_hash, $email, $purpose, $org_id, $binding_hash, $now, $expires_at, $invited_by, $mailbox)

-- query: login_token_peek
-- A link as its page shows it, spending nothing: whom it is for, and an invitation's organization
-- and inviter (NULL inviter: an invitation made before invited_by, or an inviter with no e-mail).
SELECT t.email, t.purpose, t.org_id, o.name AS org_name, u.email AS inviter_email, t.binding_hash, t.expires_at, t.used_at
FROM login_tokens t LEFT JOIN organizations o ON o.id = t.org_id LEFT JOIN users u ON u.id = t.invited_by
WHERE t.token_hash = $token_hash

-- query: login_tokens_recent
-- Links sent to one mailbox (any purpose, any spelling of the address) since $since: its mail limit.
SELECT count(*) AS n FROM login_tokens WHERE mailbox = $mailbox AND created_at > $since

-- query: invites_nth_recent_by_sender
-- The ($skip + 1)th newest invitation the account sent since $since: while there is one, the
-- account is at its limit of $skip + 1, until that one leaves the window (when to try again).
SELECT created_at FROM login_tokens WHERE purpose = 'invite' AND invited_by = $user_id AND created_at > $since
ORDER BY created_at DESC LIMIT 1 OFFSET $skip

-- query: invites_nth_recent_by_org
-- As invites_nth_recent_by_sender, for every invitation to the organization, whoever sent it.
SELECT created_at FROM login_tokens WHERE purpose = 'invite' AND org_id = $org_id AND created_at > $since
ORDER BY created_at DESC LIMIT 1 OFFSET $skip

-- query: invites_pending_of_org
SELECT count(*) AS n FROM login_tokens WHERE purpose = 'invite' AND org_id = $org_id AND used_at IS NULL AND expires_at > $now

-- query: keys_live_of_org
-- Keys the API accepts at $now: unrevoked, and a rolled one until its grace ends.
SELECT count(*) AS n FROM api_keys WHERE org_id = $org_id AND revoked_at IS NULL AND (revoke_at IS NULL OR revoke_at > $now)

-- query: login_token_spend
-- Spent only by the route it was made for ($purpose), from the browser it is bound to (an
-- invitation is bound to none), unexpired and once: one statement, so a link of the wrong kind is
-- left as it was and two spends cannot both succeed. No row: nothing was spent (login_token_peek says why).
UPDATE login_tokens SET used_at = $now
WHERE token_hash = $token_hash AND purpose = $purpose AND used_at IS NULL AND expires_at > $now
  AND (purpose = 'invite' OR binding_hash = $binding_hash)
RETURNING email, org_id

-- query: login_tokens_purge
DELETE FROM login_tokens WHERE expires_at < $cutoff OR used_at < $cutoff

-- query: sessions_purge
DELETE FROM sessions WHERE expires_at < $cutoff OR revoked_at < $cutoff

-- query: usage_charge
INSERT INTO usage_days (org_id, key_id, day, records, requests) VALUES ($org_id, $key_id, $day, $records, $requests)
ON CONFLICT (org_id, day, key_id) DO UPDATE SET records = records + excluded.records, requests = requests + excluded.requests

-- query: usage_period
SELECT coalesce(sum(records), 0) AS records, coalesce(sum(requests), 0) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day AND day <= $last_day

-- query: usage_by_day
SELECT day, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day AND day <= $last_day
GROUP BY day ORDER BY day

-- query: usage_by_key
SELECT key_id, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE day >= $first_day AND day <= $last_day
GROUP BY key_id

-- query: usage_last_day_by_key
SELECT key_id, max(day) AS day FROM usage_days WHERE org_id = $org_id AND requests > 0 GROUP BY key_id

-- `family-events ledger copy` reads every row of both files, to write them to the shared ledger.

-- query: copy_plans
SELECT name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at FROM plans ORDER BY name

-- query: copy_organizations
SELECT id, name, plan, created_at FROM organizations ORDER BY created_at, id

-- query: copy_users
SELECT id, email, created_at FROM users ORDER BY created_at, id

-- query: copy_api_keys
-- rowid: the order the keys were made in, which the shared ledger keeps as seq.
SELECT id, org_id, key_hash, hint, email, created_at, revoked_at, created_by, revoke_at FROM api_keys ORDER BY rowid

-- query: copy_identities
SELECT issuer, subject, user_id, email, email_verified, created_at FROM identities ORDER BY created_at, issuer, subject

-- query: copy_memberships
SELECT org_id, user_id, role, created_at FROM memberships ORDER BY created_at, org_id, user_id

-- query: copy_sessions
SELECT id, token_hash, user_id, created_at, last_seen_at, expires_at, revoked_at FROM sessions ORDER BY created_at, id

-- query: copy_login_tokens
SELECT token_hash, email, purpose, org_id, binding_hash, created_at, expires_at, used_at, invited_by, mailbox FROM login_tokens ORDER BY created_at, token_hash

-- query: copy_login_codes
SELECT token_hash, binding_hash, code_hash, attempts FROM login_codes ORDER BY token_hash

-- query: copy_usage_days
SELECT org_id, key_id, day, records, requests FROM usage_days ORDER BY org_id, day, key_id

-- query: usage_totals_by_org
SELECT org_id, sum(records) AS records, sum(requests) AS requests FROM usage_days GROUP BY org_id ORDER BY org_id
