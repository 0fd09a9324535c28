-- Columns added to sql/ledger_accounts.sql's tables after files were made with them. On open, each
-- statement below whose "-- adds: TABLE.COLUMN" is missing from the file runs (inside one
-- BEGIN IMMEDIATE, as the command line and the server may open an old file at once). Rows that
-- existed before get NULL, which means what it always did: a command-line key, no scheduled revocation.

-- adds: api_keys.created_by
ALTER TABLE api_keys ADD COLUMN created_by TEXT REFERENCES users (id)

-- adds: api_keys.revoke_at
ALTER TABLE api_keys ADD COLUMN revoke_at TEXT

-- adds: login_tokens.invited_by
ALTER TABLE login_tokens ADD COLUMN invited_by TEXT REFERENCES users (id)

-- adds: login_tokens.mailbox
-- Earlier links count under their address in lower case (not folded): they expire within 7 days.
ALTER TABLE login_tokens ADD COLUMN mailbox TEXT;
UPDATE login_tokens SET mailbox = lower(email) WHERE mailbox IS NULL
