-- The statements of the sign-in codes (ledger/codes.ts) on the embedded ledger, by their
-- "-- query: NAME" headers; sql/postgres/code_queries.sql has the same on the shared one.

-- query: login_code_insert
-- Only for a sign-in link, with that link's binding: a code is typed where the sign-in began.
INSERT INTO login_codes (token_hash, binding_hash, code_hash, attempts)
SELECT token_hash, binding_hash, $code_hash, 0 FROM login_tokens WHERE token_hash = $token_hash AND purpose = 'sign_in'

-- query: login_codes_of_binding
-- The browser's sign-ins with a code, newest first, live or not (to say "expired", "used"). A
-- browser has a few; the bound keeps a typed code's comparisons bounded however many it asked for.
SELECT c.token_hash, c.code_hash, c.attempts, t.email, t.expires_at, t.used_at
FROM login_codes c JOIN login_tokens t ON t.token_hash = c.token_hash
WHERE c.binding_hash = $binding_hash AND t.purpose = 'sign_in'
ORDER BY t.created_at DESC LIMIT 50

-- query: login_code_spend
-- Spends the code's link: once, unexpired (as login_token_spend), so a code and its link are one sign-in.
UPDATE login_tokens SET used_at = $now
WHERE token_hash = $token_hash AND purpose = 'sign_in' AND used_at IS NULL AND expires_at > $now
RETURNING email

-- query: login_codes_count_wrong
-- A wrong code counts against every live code of the browser that typed it.
UPDATE login_codes SET attempts = attempts + 1
WHERE binding_hash = $binding_hash AND attempts < $max
  AND token_hash IN (SELECT token_hash FROM login_tokens WHERE used_at IS NULL AND expires_at > $now)
