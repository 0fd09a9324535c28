-- The metering thread's statements on the shared ledger (workers/meter/pg-thread.ts): one batch of
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

-- query: meter_keys
SELECT id, org_id, revoked_at, revoke_at FROM api_keys WHERE id = ANY($key_ids::text[])

-- query: meter_used
SELECT org_id, sum(records) AS records
FROM usage_days
WHERE org_id = ANY($org_ids::text[]) AND day BETWEEN $first_day::date AND $last_day::date
GROUP BY org_id

-- query: meter_held
SELECT org_id, sum(amount) AS amount
FROM quota_holds
WHERE org_id = ANY($org_ids::text[]) AND expires_at > statement_timestamp()
GROUP BY org_id

-- query: meter_live_holds
-- The holds this batch settles or gives back that are still alive: an expired one's records may
-- already have gone to another request, so it can no longer be charged.
SELECT id, org_id, key_id, amount FROM quota_holds WHERE id = ANY($ids::bigint[]) AND expires_at > statement_timestamp()

-- query: meter_hold_ids
SELECT nextval(pg_get_serial_sequence('quota_holds', 'id')) AS id FROM generate_series(1, $n::int)

-- query: meter_hold_insert
INSERT INTO quota_holds (id, org_id, key_id, amount, node, expires_at) OVERRIDING SYSTEM VALUE
SELECT h.id, h.org_id, h.key_id, h.amount, $node, statement_timestamp() + make_interval(secs => $ttl_s::double precision)
FROM unnest($ids::bigint[], $org_ids::text[], $key_ids::text[], $amounts::bigint[]) AS h (id, org_id, key_id, amount)

-- query: meter_hold_delete
DELETE FROM quota_holds WHERE id = ANY($ids::bigint[])

-- query: meter_charge
INSERT INTO usage_days (org_id, key_id, day, records, requests)
SELECT c.org_id, c.key_id, c.day, c.records, c.requests
FROM unnest($org_ids::text[], $key_ids::text[], $days::date[], $records::bigint[], $requests::bigint[]) AS c (org_id, key_id, day, records, requests)
ON CONFLICT (org_id, day, key_id) DO UPDATE SET
  records  = usage_days.records + excluded.records,
  requests = usage_days.requests + excluded.requests

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
