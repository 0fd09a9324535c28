-- Every statement the metering thread and the command line run on the two ledger files, one per
-- "-- query: NAME" header; values only through parameters.

-- query: plans
SELECT name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute
FROM plans ORDER BY name

-- query: plan_upsert
INSERT INTO plans (name, monthly_record_limit, excluded_categories, attribution_required, requests_per_minute, created_at)
VALUES ($name, $monthly_record_limit, $excluded_categories, $attribution_required, $requests_per_minute, $now)
ON CONFLICT (name) DO UPDATE SET
  monthly_record_limit = excluded.monthly_record_limit,
  excluded_categories  = excluded.excluded_categories,
  attribution_required = excluded.attribution_required,
  requests_per_minute  = excluded.requests_per_minute

-- query: organizations
SELECT id, name, plan, created_at FROM organizations ORDER BY created_at, id

-- query: organization_by_name
SELECT id, name, plan, created_at FROM organizations WHERE name = $name

-- query: organization_by_id
SELECT id, name, plan, created_at FROM organizations WHERE id = $id

-- query: organization_insert
INSERT INTO organizations (id, name, plan, created_at) VALUES ($id, $name, $plan, $now)

-- query: organization_set_plan
UPDATE organizations SET plan = $plan WHERE id = $id

-- query: keys
SELECT k.id, k.org_id, o.name AS org_name, k.key_hash, k.hint, k.email, k.created_at, k.revoked_at
FROM api_keys k JOIN organizations o ON o.id = k.org_id
ORDER BY k.created_at, k.id

-- query: key_insert
INSERT INTO api_keys (id, org_id, key_hash, hint, email, created_at) VALUES ($id, $org_id, $key_hash, $hint, $email, $now)

-- query: key_by_hash
SELECT id FROM api_keys WHERE key_hash = $key_hash

-- query: key_revoke
UPDATE api_keys SET revoked_at = $now WHERE id = $id AND revoked_at IS NULL

-- query: usage_charge
INSERT INTO usage_days (org_id, key_id, day, records, requests) VALUES ($org_id, $key_id, $day, $records, $requests)
ON CONFLICT (org_id, day, key_id) DO UPDATE SET records = records + excluded.records, requests = requests + excluded.requests

-- query: usage_period
SELECT coalesce(sum(records), 0) AS records, coalesce(sum(requests), 0) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day AND day <= $last_day

-- query: usage_by_day
SELECT day, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE org_id = $org_id AND day >= $first_day AND day <= $last_day
GROUP BY day ORDER BY day

-- query: usage_by_key
SELECT key_id, sum(records) AS records, sum(requests) AS requests
FROM usage_days WHERE day >= $first_day AND day <= $last_day
GROUP BY key_id
