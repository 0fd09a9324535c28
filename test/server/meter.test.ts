// What goes wrong inside the metering thread, and is survived there, is told in the server's
// structured log (server/meter.ts logs the thread's `warning` messages): one JSON line at level
// warn, not a process warning on stderr that no log collector reads. Run once per backend: the
// embedded thread (thread.ts) and the PostgreSQL one (pg-thread.ts), the latter skipped where no
// server answers.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../server/log.ts';
import { Meter } from '../../server/meter.ts';
import { ledgerBackends, testLedger, type TestLedger } from '../ledger.ts';

for (const backend of await ledgerBackends()) {
  describe(`on ${backend.name}`, { skip: backend.skip }, () => {
    let ledger: TestLedger;
    let meter: Meter;
    let out = '';

    before(async () => {
      ledger = await testLedger(backend, 'meter_warnings');
      const stream = new PassThrough();
      stream.on('data', (c: Buffer) => (out += c.toString('utf8')));
      const { logger } = createLogger('info', stream);
      meter = await Meter.start(loadConfig({ DATA_DIR: ledger.dir, ...ledger.env }), logger);
    });

    after(async () => {
      await meter?.close();
      await ledger?.drop();
    });

    test('an account operation that fails in the thread is a structured warning in the log', async () => {
      // The thread catches what the store throws, answers `unavailable` and says why. A missing
      // address throws in either store before any SQL runs, so one trigger serves both backends.
      const r = await meter.accounts.signInByEmail(null as unknown as string);
      assert.ok('ok' in r && r.ok === false && r.code === 'unavailable', JSON.stringify(r));
      // The warning is posted before the answer; the stream hands it on a turn later.
      await new Promise((resolve) => setImmediate(resolve));
      const lines = out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const line = lines.find((l) => l.msg === 'account operation failed');
      assert.ok(line, `no warning line in the log:\n${out}`);
      assert.equal(line.level, 40, 'logged at warn');
      assert.equal(line.call, 'signInByEmail');
      assert.match(String(line.err), /trim/, 'the thrown error is told');
    });
  });
}
