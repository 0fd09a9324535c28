-- The statements of the sign-in codes (ledger/codes.ts) on the shared ledger: as
-- sql/ledger_code_queries.sql, with the rows a typed code reads locked until its commit.

-- query: login_code_insert
INSERT INTO login_codes (token_hash, binding_hash, code_hash, attempts)
SELECT token_hash, binding_hash, $code_hash, 0 FROM login_tokens WHERE token_hash = $token_hash AND purpose = 'sign_in'

-- query: login_codes_of_binding
-- FOR UPDATE: two codes typed at once on two nodes are decided one after the other, so neither
-- the count of wrong tries nor a spend is lost.
SELECT c.token_hash, c.code_hash, c.attempts, t.email, t.expires_at, t.used_at
FROM login_codes c JOIN login_tokens t ON t.token_hash = c.token_hash
WHERE c.binding_hash = $binding_hash AND t.purpose = 'sign_in'
ORDER BY t.created_at DESC LIMIT 50
FOR UPDATE OF c

-- query: login_code_spend
UPDATE login_tokens SET used_at = $now
WHERE token_hash = $token_hash AND purpose = 'sign_in' AND used_at IS NULL AND expires_at > $now
RETURNING email

-- query: login_codes_count_wrong
UPDATE login_codes SET attempts = attempts + 1
WHERE binding_hash = $binding_hash AND attempts < $max::int
  AND token_hash IN (SELECT token_hash FROM login_tokens WHERE used_at IS NULL AND expires_at > $now)
