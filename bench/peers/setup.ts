// The PostgreSQL role the benchmark's peers (bench/peers/fastify-pg.ts) log in as: a password login
// over TCP on 127.0.0.1, as an application server connects, with read-only grants on one dataset.
import pg from 'pg';
import { BenchError } from '../lib/common.ts';
import { DATABASE, psql } from '../lib/pg.ts';

export const PEER_ROLE = 'fe_bench_peer';
/** Fixed: a local, read-only bench role on a loopback-only listener, not a secret. */
const PEER_PASSWORD = 'fe_bench_peer_pw';

/**
 * Creates the role if missing and (re)grants what a peer needs on `schema`. Call it after the
 * dataset's table is (re)loaded: a reloaded table is a new table, so its grants are new too
 * (default privileges cover tables the postgres role creates later in the schema, but not this run's).
 * Ends with a TCP login as the role, so a pg_hba.conf that refuses it fails here, not in the peer.
 */
export async function ensurePeerRole(o: { port: number; schema: string }): Promise<{ user: string; password: string }> {
  if (!/^[a-z_]\w*$/.test(o.schema)) throw new BenchError(`not a plain schema name: ${o.schema}`);
  const s = o.schema;
  await psql(
    // Debian's pg_hba.conf asks host connections for scram-sha-256, which a role whose password was
    // stored as md5 (password_encryption = md5 on an older setup) cannot answer: store it as SCRAM.
    `SET password_encryption = 'scram-sha-256';
     DO $$ BEGIN
       IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${PEER_ROLE}') THEN CREATE ROLE ${PEER_ROLE}; END IF;
     END $$;
     ALTER ROLE ${PEER_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${PEER_PASSWORD}';
     GRANT CONNECT ON DATABASE ${DATABASE} TO ${PEER_ROLE};
     GRANT USAGE ON SCHEMA ${s} TO ${PEER_ROLE};
     GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${PEER_ROLE};
     GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${PEER_ROLE};
     ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT SELECT ON TABLES TO ${PEER_ROLE};
     ALTER DEFAULT PRIVILEGES IN SCHEMA ${s} GRANT EXECUTE ON FUNCTIONS TO ${PEER_ROLE}`,
    { port: o.port },
  );

  const client = new pg.Client({
    host: '127.0.0.1',
    port: o.port,
    user: PEER_ROLE,
    password: PEER_PASSWORD,
    database: DATABASE,
    connectionTimeoutMillis: 5000,
  });
  try {
    await client.connect();
    await client.query(`SELECT 1 FROM ${s}.events LIMIT 1`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new BenchError(
      `${PEER_ROLE} cannot log in over TCP and read ${s}.events (127.0.0.1:${o.port}/${DATABASE}): ${message}. ` +
        `Check pg_hba.conf has a "host ${DATABASE} ${PEER_ROLE} 127.0.0.1/32 scram-sha-256" (or "host all all …") line before any reject.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  return { user: PEER_ROLE, password: PEER_PASSWORD };
}
