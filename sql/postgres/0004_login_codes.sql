-- The one-time code a sign-in mail carries beside its link (issue 28 item 15; ledger/codes.ts),
-- as sql/ledger_login_codes.sql has it on the embedded ledger. Deleted with its link.
CREATE TABLE login_codes (
  token_hash   text PRIMARY KEY REFERENCES login_tokens (token_hash) ON DELETE CASCADE,
  binding_hash text NOT NULL,
  -- A slow, salted hash of the code (server/web/account/code.ts): the code is short.
  code_hash    text NOT NULL,
  attempts     integer NOT NULL DEFAULT 0
);
CREATE INDEX login_codes_binding ON login_codes (binding_hash);
