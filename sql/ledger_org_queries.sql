-- What an owner does to an organization on the website (issue 28 item 12), on the embedded
-- ledger: rename it, list and cancel its pending invitations, remove a member. Named statements,
-- read with sql/ledger_queries.sql's (ledger/sqlite/store.ts); sql/postgres/org_queries.sql has
-- the same names for the shared ledger.

-- query: org_rename
UPDATE organizations SET name = $name WHERE id = $id

-- query: org_owner_count
SELECT count(*) AS n FROM memberships WHERE org_id = $org_id AND role = 'owner'

-- query: org_membership_delete
DELETE FROM memberships WHERE org_id = $org_id AND user_id = $user_id

-- query: org_memberships_of_user
SELECT count(*) AS n FROM memberships WHERE user_id = $user_id

-- query: org_invites_pending
-- Waiting: neither spent nor expired (a cancelled one expired when it was cancelled).
SELECT t.token_hash AS id, t.email, t.created_at, t.expires_at, u.email AS invited_by
FROM login_tokens t LEFT JOIN users u ON u.id = t.invited_by
WHERE t.purpose = 'invite' AND t.org_id = $org_id AND t.used_at IS NULL AND t.expires_at > $now
ORDER BY t.created_at DESC, t.token_hash

-- query: org_invite_cancel
-- Expired at once rather than deleted: it still counts against the sender's and the
-- organization's sending limits, so cancelling and sending again cannot get around them.
UPDATE login_tokens SET expires_at = $now
WHERE token_hash = $id AND org_id = $org_id AND purpose = 'invite' AND used_at IS NULL AND expires_at > $now
