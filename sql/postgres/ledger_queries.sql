-- The accounts and usage statements of the shared ledger (ledger/postgres/store.ts): the
-- PostgreSQL versions of sql/ledger_queries.sql, under the same names where one applies, so both
-- backends answer alike. Differences that matter:
--   - organizations and api_keys give created_at and revoked_at to the second ('…:SSZ'), as the
--     embedded ledger writes them, so the command line prints the same on both; the other instants
--     come back with milliseconds (toISOString), as the embedded ledger's website tables keep them.
--   - Names and e-mails match without regard to case (lower(), the unique indexes' expression).
--   - Ids sort with COLLATE "C": the embedded ledger's byte order, whatever the database's locale.
--   - Rows a check-then-write reads are locked (FOR UPDATE): several nodes write at once.

-- query: plans
SELECT name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute
FROM plans ORDER BY name COLLATE "C"

-- query: plan_upsert
INSERT INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ($name, $monthly_record_limit, $excluded_categories::jsonb, $attribution_required, $requests_per_minute, $now)
ON CONFLICT (name) DO UPDATE SET
  monthly_record_limit = excluded.monthly_record_limit,
  excluded_categories  = excluded.excluded_categories,
  attribution_required = excluded.attribution_required,
  requests_per_minute  = excluded.requests_per_minute

-- query: organizations
SELECT o.id, o.name, o.plan, to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at
FROM organizations o ORDER BY o.created_at, o.id COLLATE "C"

-- query: organization_by_name
SELECT o.id, o.name, o.plan, to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at
FROM organizations o WHERE lower(o.name) = lower($name::text)

-- query: organization_by_id
SELECT o.id, o.name, o.plan, to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at
FROM organizations o WHERE o.id = $id

-- query: organization_insert
INSERT INTO organizations (id, name, plan, created_at) VALUES ($id, $name, $plan, $now)

-- query: organization_set_plan
UPDATE organizations SET plan = $plan WHERE id = $id

-- query: keys
SELECT k.id, k.org_id, o.name AS org_name, k.key_hash, k.hint, k.email,
       to_char(k.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       to_char(k.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS revoked_at,
       k.revoke_at, k.created_by
FROM api_keys k JOIN organizations o ON o.id = k.org_id
ORDER BY k.created_at, k.id COLLATE "C"

-- query: key_insert
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at) VALUES ($id, $org_id, $key_hash, $hint, $email, $now)

-- query: key_by_hash
SELECT id FROM api_keys WHERE key_hash = $key_hash

-- query: key_by_id
SELECT id FROM api_keys WHERE id = $id

-- query: key_revoke
UPDATE api_keys SET revoked_at = $now WHERE id = $id AND revoked_at IS NULL

-- query: key_insert_by_user
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at, created_by)
VALUES ($id, $org_id, $key_hash, $hint, $email, $now, $created_by)

-- query: keys_of_org
-- last_used: the last day the key made a request on, from the usage ledger in the same database.
SELECT k.id, k.hint,
       to_char(k.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       to_char(k.revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS revoked_at,
       k.revoke_at, k.created_by,
       (SELECT max(u.day) FROM usage_days u WHERE u.org_id = k.org_id AND u.key_id = k.id AND u.requests > 0) AS last_used
FROM api_keys k WHERE k.org_id = $org_id
-- created_at is to the second: within one, the later insert (seq) is the newer key.
ORDER BY k.created_at DESC, k.seq DESC

-- query: key_of_org
-- Locked: two nodes rolling the same key both see the other's scheduled revocation.
SELECT id, revoked_at, revoke_at FROM api_keys WHERE id = $id AND org_id = $org_id FOR UPDATE

-- query: key_revoke_in_org
UPDATE api_keys SET revoked_at = $now WHERE id = $id AND org_id = $org_id AND revoked_at IS NULL

-- query: key_schedule_revoke
UPDATE api_keys SET revoke_at = $revoke_at WHERE id = $id

-- query: user_by_id
SELECT id, email, created_at FROM users WHERE id = $id

-- query: user_by_email
SELECT id, email, created_at FROM users WHERE lower(email) = lower($email::text)

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
WHERE m.user_id = $user_id ORDER BY CASE m.role WHEN 'owner' THEN 0 ELSE 1 END, m.created_at, o.id COLLATE "C"

-- query: members_of_org
SELECT u.id AS user_id, u.email, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.org_id = $org_id ORDER BY CASE m.role WHEN 'owner' THEN 0 ELSE 1 END, m.created_at, u.id COLLATE "C"

-- query: session_insert
INSERT INTO sessions (id, token_hash, user_id, created_at, last_seen_at, expires_at)
VALUES ($id, $token_hash, $user_id, $now, $now, $expires_at)

-- query: session_by_token
SELECT id, user_id, last_seen_at, expires_at, revoked_at FROM sessions WHERE token_hash = $token_hash

-- query: session_seen
-- Never moves backwards: two nodes touching one session at once may write in either order.
UPDATE sessions SET last_seen_at = $now WHERE id = $id AND last_seen_at < $now

-- query: session_end
UPDATE sessions SET revoked_at = $now WHERE token_hash = $token_hash AND revoked_at IS NULL

-- query: sessions_end_all
UPDATE sessions SET revoked_at = $now WHERE user_id = $user_id AND revoked_at IS NULL

-- query: login_token_insert
INSERT INTO login_tokens (token_hash, email, purpose, org_id, binding_hash, created_at, expires_at, invited_by, mailbox)
VALUES ($token_hash, $email, $purpose, $org_id, $binding_hash, $now, $expires_at, $invited_by, $mailbox)

-- query: login_token_address_lock
-- Until the commit: the count and insert of links to one mailbox (folded), on any node, one at a time.
SELECT pg_advisory_xact_lock(hashtext($mailbox::text))

-- query: login_tokens_recent
-- Links sent to one mailbox (any purpose, any spelling of the address) since $since: its mail limit.
SELECT count(*)::int AS n FROM login_tokens WHERE mailbox = $mailbox AND created_at > $since

-- query: invite_sender_lock
-- Until the commit: an account's invitations, counted and made on any node, one at a time. Every
-- transaction takes these locks in one order (sender, organization, mailbox): none waits in a cycle.
SELECT pg_advisory_xact_lock(hashtext('invite-sender:' || $user_id::text))

-- query: invite_org_lock
SELECT pg_advisory_xact_lock(hashtext('invite-org:' || $org_id::text))

-- query: invites_nth_recent_by_sender
-- The ($skip + 1)th newest invitation the account sent since $since: while there is one, the
-- account is at its limit of $skip + 1, until that one leaves the window (when to try again).
SELECT created_at FROM login_tokens WHERE purpose = 'invite' AND invited_by = $user_id AND created_at > $since
ORDER BY created_at DESC LIMIT 1 OFFSET $skip::int

-- query: invites_nth_recent_by_org
-- As invites_nth_recent_by_sender, for every invitation to the organization, whoever sent it.
SELECT created_at FROM login_tokens WHERE purpose = 'invite' AND org_id = $org_id AND created_at > $since
ORDER BY created_at DESC LIMIT 1 OFFSET $skip::int

-- query: invites_pending_of_org
SELECT count(*)::int AS n FROM login_tokens WHERE purpose = 'invite' AND org_id = $org_id AND used_at IS NULL AND expires_at > $now

-- query: keys_org_lock
-- Until the commit: an organization's live keys, counted and added on any node, one at a time.
SELECT pg_advisory_xact_lock(hashtext('keys-org:' || $org_id::text))

-- query: keys_live_of_org
-- Keys the API accepts at $now: unrevoked, and a rolled one until its grace ends.
SELECT count(*)::int AS n FROM api_keys WHERE org_id = $org_id AND revoked_at IS NULL AND (revoke_at IS NULL OR revoke_at > $now)

-- query: login_token_peek
-- A link as its page shows it, spending nothing: whom it is for, and an invitation's organization
-- and inviter (NULL inviter: an invitation made before invited_by, or an inviter with no e-mail).
SELECT t.email, t.purpose, t.org_id, o.name AS org_name, u.email AS inviter_email, t.binding_hash, t.expires_at, t.used_at
FROM login_tokens t LEFT JOIN organizations o ON o.id = t.org_id LEFT JOIN users u ON u.id = t.invited_by
WHERE t.token_hash = $token_hash

-- query: login_token_spend
-- Spent only by the route it was made for ($purpose), from the browser it is bound to (an
-- invitation is bound to none), unexpired and once, in one statement: the row lock makes a second
-- spender on any node wait, re-check the WHERE against the committed row, and find it used.
-- No row: nothing was spent (login_token_peek says why).
UPDATE login_tokens SET used_at = $now
WHERE token_hash = $token_hash AND purpose = $purpose AND used_at IS NULL AND expires_at > $now
  AND (purpose = 'invite' OR binding_hash = $binding_hash)
RETURNING email, org_id

-- query: login_tokens_purge
DELETE FROM login_tokens WHERE expires_at < $cutoff OR used_at < $cutoff

-- query: sessions_purge
DELETE FROM sessions WHERE expires_at < $cutoff OR revoked_at < $cutoff

-- query: usage_period
SELECT coalesce(sum(records), 0) AS records, coalesce(sum(requests), 0) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day::date AND day <= $last_day::date

-- query: usage_by_day
SELECT day, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day::date AND day <= $last_day::date
GROUP BY day ORDER BY day

-- query: usage_by_key
SELECT key_id, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE day >= $first_day::date AND day <= $last_day::date
GROUP BY key_id

-- query: usage_last_day_by_key
SELECT key_id, max(day) AS day FROM usage_days WHERE org_id = $org_id AND requests > 0 GROUP BY key_id
