-- Limits on what an account can make the service send (issue 26), counted in the ledger so they
-- hold across nodes: invitations per sender and per organization, and links per mailbox.
-- invited_by: the account that sent an invitation (NULL for a sign-in link).
ALTER TABLE login_tokens ADD COLUMN invited_by text REFERENCES users (id);
-- mailbox: the address folded for counting (ledger/mailbox.ts); the mail goes to `email`.
ALTER TABLE login_tokens ADD COLUMN mailbox text;
-- Earlier links count under their address in lower case (not folded): they expire within 7 days.
UPDATE login_tokens SET mailbox = lower(email);
CREATE INDEX login_tokens_mailbox ON login_tokens (mailbox, created_at);
CREATE INDEX login_tokens_invites_by_org ON login_tokens (org_id, created_at) WHERE purpose = 'invite';
CREATE INDEX login_tokens_invites_by_sender ON login_tokens (invited_by, created_at) WHERE invited_by IS NOT NULL;
