-- The one-time code a sign-in mail carries beside its link (issue 28 item 15; ledger/codes.ts).
-- Its own table, made on open like sql/ledger_accounts.sql's (IF NOT EXISTS: older files get it
-- too). A row lives as long as its link: deleted with it (ON DELETE CASCADE, foreign_keys is on).
CREATE TABLE IF NOT EXISTS login_codes (
  token_hash   TEXT PRIMARY KEY REFERENCES login_tokens (token_hash) ON DELETE CASCADE,
  -- The link's binding, copied: the codes of the browser that asked are found by it.
  binding_hash TEXT NOT NULL,
  -- A slow, salted hash of the code (server/web/account/code.ts): the code is short.
  code_hash    TEXT NOT NULL,
  -- Wrong codes typed in the browser while this one was live; at CODE_MAX_ATTEMPTS it is dead.
  attempts     INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX IF NOT EXISTS login_codes_binding ON login_codes (binding_hash);
