-- What an owner does to an organization on the website (issue 28 item 12), on the shared ledger:
-- the statements of sql/ledger_org_queries.sql, by the same names, for PostgreSQL.

-- query: org_rename
-- Another node taking the same name (any case) at once: the unique index refuses the second, whose
-- retry then finds the name taken.
UPDATE organizations SET name = $name WHERE id = $id

-- query: org_owner_lock
-- Until the commit: two owners removing each other on two nodes cannot leave the organization with none.
SELECT pg_advisory_xact_lock(hashtext('org-owners:' || $org_id::text))

-- query: org_owner_count
SELECT count(*)::int AS n FROM memberships WHERE org_id = $org_id AND role = 'owner'

-- query: org_membership_delete
DELETE FROM memberships WHERE org_id = $org_id AND user_id = $user_id

-- query: org_memberships_of_user
SELECT count(*)::int AS n FROM memberships WHERE user_id = $user_id

-- query: org_invites_pending
-- Waiting: neither spent nor expired (a cancelled one expired when it was cancelled).
SELECT t.token_hash AS id, t.email, t.created_at, t.expires_at, u.email AS invited_by
FROM login_tokens t LEFT JOIN users u ON u.id = t.invited_by
WHERE t.purpose = 'invite' AND t.org_id = $org_id AND t.used_at IS NULL AND t.expires_at > $now
ORDER BY t.created_at DESC, t.token_hash COLLATE "C"

-- query: org_invite_cancel
-- Expired at once rather than deleted: it still counts against the sending limits.
UPDATE login_tokens SET expires_at = $now
WHERE token_hash = $id AND org_id = $org_id AND purpose = 'invite' AND used_at IS NULL AND expires_at > $now
