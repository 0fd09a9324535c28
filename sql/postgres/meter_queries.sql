-- The metering thread's statements on the shared ledger (ledger/postgres/thread.ts): one batch of
-- a node's reservations and charges is one transaction of these, in this order.
-- Hold expiry is judged at statement_timestamp(), never now(): now() is when the transaction
-- began, before it waited for the organizations' locks, and a hold another node has since seen
-- expire (and granted its records to someone else) must not be charged here as if still alive.

-- query: meter_lock_orgs
-- Serializes every node's batches that touch these organizations (ordered by id: no deadlock).
-- NO KEY UPDATE leaves new keys and memberships of the organization free to be inserted.
SELECT o.id, o.plan, p.monthly_record_limit
FROM organizations o JOIN plans p ON p.name = o.plan
WHERE o.id = ANY($org_ids::text[])
ORDER BY o.id
FOR NO KEY UPDATE OF o

-- query: meter_state
-- Everything the batch decides from, read in one statement after the locks are held (a statement
-- of its own: under READ COMMITTED it sees what the nodes that held the locks before committed).
-- used: records charged per organization and period (o, the period's place in first_days).
SELECT
  (SELECT coalesce(json_agg(json_build_object('id', k.id, 'revoked', k.revoked_at IS NOT NULL OR k.revoke_at <= statement_timestamp())), '[]')
     FROM api_keys k WHERE k.id = ANY($key_ids::text[])) AS keys,
  (SELECT coalesce(json_object_agg(h.org_id, h.amount), '{}')
     FROM (SELECT org_id, sum(amount) AS amount FROM quota_holds
           WHERE org_id = ANY($org_ids::text[]) AND expires_at > statement_timestamp() GROUP BY org_id) h) AS held,
  (SELECT coalesce(json_object_agg(h.id, h.amount), '{}')
     FROM quota_holds h WHERE h.id = ANY($hold_ids::bigint[]) AND h.expires_at > statement_timestamp()) AS live,
  (SELECT coalesce(json_agg(json_build_object('org_id', u.org_id, 'o', p.o, 'records', u.records)), '[]')
     FROM unnest($first_days::date[], $last_days::date[]) WITH ORDINALITY AS p (first_day, last_day, o)
     CROSS JOIN LATERAL (SELECT org_id, sum(records) AS records FROM usage_days
                         WHERE org_id = ANY($org_ids::text[]) AND day BETWEEN p.first_day AND p.last_day GROUP BY org_id) u) AS used

-- query: meter_write
-- The batch's writes in one statement: new holds (numbered here, returned in the order given),
-- holds charged or given back deleted, charges added to each key's day.
WITH ids AS MATERIALIZED (
  SELECT nextval(pg_get_serial_sequence('quota_holds', 'id')) AS id, n.o
  FROM generate_series(1, cardinality($hold_org_ids::text[])) AS n (o)
), held AS (
  INSERT INTO quota_holds (id, org_id, key_id, amount, node, expires_at) OVERRIDING SYSTEM VALUE
  SELECT ids.id, h.org_id, h.key_id, h.amount, $node, statement_timestamp() + make_interval(secs => $ttl_s::double precision)
  FROM unnest($hold_org_ids::text[], $hold_key_ids::text[], $hold_amounts::bigint[]) WITH ORDINALITY AS h (org_id, key_id, amount, o)
  JOIN ids ON ids.o = h.o
), gone AS (
  DELETE FROM quota_holds WHERE id = ANY($done_ids::bigint[])
), charged AS (
  INSERT INTO usage_days (org_id, key_id, day, records, requests)
  SELECT c.org_id, c.key_id, c.day, c.records, c.requests
  FROM unnest($org_ids::text[], $key_ids::text[], $days::date[], $records::bigint[], $requests::bigint[]) AS c (org_id, key_id, day, records, requests)
  ON CONFLICT (org_id, day, key_id) DO UPDATE SET
    records  = usage_days.records + excluded.records,
    requests = usage_days.requests + excluded.requests
)
SELECT id FROM ids ORDER BY o

-- query: meter_holds_sweep
-- Expired holds no longer count; their rows are deleted a while later, by whichever node sweeps.
DELETE FROM quota_holds WHERE expires_at < now() - interval '1 hour'

-- query: meter_key_by_hash
SELECT id FROM api_keys WHERE key_hash = ANY($hashes::text[])

-- query: current_snapshot_get
SELECT snapshot_id, published_at FROM current_snapshot

-- query: current_snapshot_set
INSERT INTO current_snapshot (snapshot_id, published_at) VALUES ($snapshot_id, now())
ON CONFLICT (only_row) DO UPDATE SET snapshot_id = excluded.snapshot_id, published_at = excluded.published_at

-- query: current_snapshot_first
-- The first snapshot of an empty shared volume, when the ledger names none yet: a ledger that
-- already names one keeps it (a node that lost its volume does not overrule the builder).
INSERT INTO current_snapshot (snapshot_id, published_at) VALUES ($snapshot_id, now())
ON CONFLICT (only_row) DO NOTHING
RETURNING snapshot_id

-- query: web_secret_share
-- The cluster's website key: $candidate (this node's own) when no node has set one, else the one
-- set. A node racing another's first insert can see neither row (its snapshot predates that
-- commit): the caller asks again.
WITH seeded AS (
  INSERT INTO web_secret (secret) VALUES ($candidate) ON CONFLICT (only_row) DO NOTHING RETURNING secret
)
SELECT secret FROM seeded
UNION ALL
SELECT secret FROM web_secret
LIMIT 1
