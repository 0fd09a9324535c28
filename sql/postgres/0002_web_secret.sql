-- The website's signing key (its CSRF tokens and the OIDC transaction cookie), one for the whole
-- cluster: a form one node serves is posted to another. The first node that reaches this table
-- seeds it with its own LEDGER_DIR/web-secret, so a single node moved onto this ledger keeps its
-- visitors' forms and cookies valid; every other node takes the key found here.
CREATE TABLE web_secret (
  only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
