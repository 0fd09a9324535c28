// query/stream.ts over a real MessageChannel: the body arrives whole and in order at the reader's
// pace, and chunk memory the reader hands back is reused, so a long body cycles a few buffers
// (flat memory) instead of leaving one behind per chunk.
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { test } from 'node:test';
import { STREAM_WINDOW_BYTES, type PageHead, type StreamControl, type StreamMessage } from '../../query/protocol.ts';
import { streamChunks } from '../../query/stream.ts';

const HEAD: PageHead = { total: 0, count: 0, nextOffset: null, nextCursor: null, truncated: false, validUntilMs: null, etag: 'x' };
const CHUNKS = 60;
const CHUNK_BYTES = 300 * 1024;

/** Streams CHUNKS chunks, each filled with its number; the reader copies each out, as a socket does, then credits it. */
async function run(giveBack: boolean): Promise<{ received: Buffer; allocations: number }> {
  const { port1, port2 } = new MessageChannel();
  const parts: Buffer[] = [];
  let ended = false;
  port1.on('message', (m: StreamMessage) => {
    if (m.type === 'chunk') {
      parts.push(Buffer.from(m.bytes)); // a copy: the socket's
      const credit: StreamControl = { type: 'credit', bytes: m.bytes.length, buffers: giveBack ? [m.bytes.buffer as ArrayBuffer] : [] };
      // A reader a little slower than the writer, so the window fills.
      setTimeout(() => port1.postMessage(credit, giveBack ? [m.bytes.buffer as ArrayBuffer] : []), 1);
    } else if (m.type === 'end') ended = true;
  });
  let i = 0;
  const done = await streamChunks(port2, new Int32Array(new SharedArrayBuffer(4)), HEAD, (alloc) => {
    const bytes = alloc(CHUNK_BYTES);
    bytes.fill(i & 0xff);
    i++;
    return Promise.resolve({ bytes, rows: 1, last: i === CHUNKS });
  });
  await new Promise((r) => setTimeout(r, 20));
  port1.close();
  assert.ok(done.ok && 'streamed' in done, JSON.stringify(done));
  assert.ok(ended, 'the end message arrived');
  assert.equal(done.rows, CHUNKS);
  return { received: Buffer.concat(parts), allocations: done.allocations };
}

function assertWhole(received: Buffer): void {
  assert.equal(received.length, CHUNKS * CHUNK_BYTES);
  for (let c = 0; c < CHUNKS; c++) {
    const part = received.subarray(c * CHUNK_BYTES, (c + 1) * CHUNK_BYTES);
    assert.ok(
      part.every((b) => b === (c & 0xff)),
      `chunk ${c} arrived with another chunk's bytes`,
    );
  }
}

test('buffers moved back with credits are reused: a window of them, not one per chunk', async () => {
  const { received, allocations } = await run(true);
  assertWhole(received);
  // The window holds STREAM_WINDOW_BYTES / CHUNK_BYTES chunks, one more is being made, one may be on its way back.
  const bound = Math.ceil(STREAM_WINDOW_BYTES / CHUNK_BYTES) + 2;
  assert.ok(allocations <= bound, `${allocations} buffers allocated for ${CHUNKS} chunks (at most ${bound})`);
});

test('a reader that keeps its chunks (a cache, a compressor) gets fresh memory for each', async () => {
  const { received, allocations } = await run(false);
  assertWhole(received);
  assert.equal(allocations, CHUNKS);
});
