// The access log and request metrics (server/access.ts): batched per turn, yet every line is the
// one pino itself writes for the same record (pino is the oracle, read back through the same
// kind of stream), nothing is lost, and the counters and histogram count every request.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'node:test';
import { AccessLog, type AccessRecord } from '../../server/access.ts';
import { createLogger } from '../../server/log.ts';
import { Metrics } from '../../server/metrics.ts';

function capture(level = 'info'): { logging: ReturnType<typeof createLogger>; text: () => string } {
  let out = '';
  const stream = new PassThrough();
  stream.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { logging: createLogger(level, stream), text: () => out };
}

const metrics = (): Metrics =>
  new Metrics({ queueDepth: () => 0, snapshotId: () => null, snapshotEvents: () => 0, cacheBytes: () => 0, inFlight: () => 0, snapshotPending: () => null });

const RECORDS: readonly AccessRecord[] = [
  { method: 'GET', route: '/v1/events', status: 200, bytes: 21250, seconds: 0.00342, cache: 'hit', aborted: false },
  { method: 'HEAD', route: '/v1/events/{id}', status: 304, bytes: 0, seconds: 0.0001, cache: 'miss', aborted: false },
  { method: 'GET', route: 'unmatched', status: 404, bytes: 310, seconds: 0.5, cache: null, aborted: false },
  { method: 'GET', route: '/v1/events.csv', status: 499, bytes: 0, seconds: 12.34567, cache: null, aborted: true },
  // Whatever a client sends as a method is a JSON string in the line.
  { method: 'PO"ST\\', route: '/events', status: 405, bytes: 12, seconds: 0, cache: null, aborted: false },
];

/** The line pino writes for a record, with the fields server/start/main.ts logged before access.ts. */
function pinoLine(r: AccessRecord): Record<string, unknown> {
  const { logging, text } = capture();
  logging.logger.info(
    {
      method: r.method,
      route: r.route,
      status: r.status,
      bytes: r.bytes,
      ms: Math.round(r.seconds * 1e4) / 10,
      cache: r.cache,
      aborted: r.aborted || undefined,
    },
    'request',
  );
  return JSON.parse(text()) as Record<string, unknown>;
}

test("each request's line is pino's line for it, field for field and in the same order; all of a turn are written once, after it", async () => {
  const { logging, text } = capture();
  let writes = 0;
  const access = new AccessLog((s) => {
    writes++;
    logging.infoLines?.(s);
  }, metrics());
  for (const r of RECORDS) access.add(r);
  assert.equal(text(), '', 'nothing is written during the turn');
  await nextTurn();
  assert.equal(writes, 1);
  const lines = text().trimEnd().split('\n');
  assert.equal(lines.length, RECORDS.length);
  for (const [i, r] of RECORDS.entries()) {
    const ours = JSON.parse(lines[i] as string) as Record<string, unknown>;
    const theirs = pinoLine(r);
    assert.ok(typeof ours.time === 'number' && Math.abs(ours.time - Date.now()) < 60_000);
    assert.deepEqual(Object.keys(ours), Object.keys(theirs), 'same fields in the same order');
    assert.deepEqual({ ...ours, time: 0 }, { ...theirs, time: 0 });
  }
});

test('flush writes what is pending at once (shutdown, /metrics); a level above info writes no line but still counts', async () => {
  const { logging, text } = capture();
  const access = new AccessLog(logging.infoLines, metrics());
  access.add(RECORDS[0] as AccessRecord);
  access.flush();
  assert.equal(text().trimEnd().split('\n').length, 1);
  await nextTurn();
  assert.equal(text().trimEnd().split('\n').length, 1, 'the turn-end flush finds nothing left to write again');

  const quiet = capture('warn');
  assert.equal(quiet.logging.infoLines, null);
  const m = metrics();
  const counted = new AccessLog(quiet.logging.infoLines, m);
  for (const r of RECORDS) counted.add(r);
  counted.flush();
  assert.equal(quiet.text(), '');
  const out = await m.text();
  assert.match(out, /http_requests_total\{route="\/v1\/events",status="200"\} 1/);
});

test('the metrics count every request: 1,000 in one turn give counters and histogram counts of 1,000', async () => {
  const m = metrics();
  const access = new AccessLog(null, m);
  for (let i = 0; i < 1000; i++) access.add({ ...(RECORDS[i % 2] as AccessRecord), seconds: i / 1e5 });
  await nextTurn();
  const out = await m.text();
  assert.match(out, /http_requests_total\{route="\/v1\/events",status="200"\} 500\n/);
  assert.match(out, /http_requests_total\{route="\/v1\/events\/\{id\}",status="304"\} 500\n/);
  assert.match(out, /http_request_duration_seconds_count\{route="\/v1\/events"\} 500\n/);
  assert.match(out, /http_request_duration_seconds_bucket\{le="0.0025",route="\/v1\/events\/\{id\}"\} 125\n/);
});
