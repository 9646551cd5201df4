import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrepJob, GrepPool, GrepThreadStuck } from './grep-pool';

/**
 * The pool's scheduling with a stand-in thread speaking the same protocol
 * (the real one runs the domain's GrepScanner, covered by its own tests and
 * end to end): it counts bytes, hangs on the pattern "hang", and reports a
 * time stop when told the deadline passed.
 */
const FAKE_THREAD = `
const { parentPort } = require('node:worker_threads');
let job = null;
parentPort.on('message', (m) => {
  if (m.type === 'start') { job = { pattern: m.pattern, bytes: 0 }; return parentPort.postMessage({ type: 'started' }); }
  if (m.type === 'piece') {
    if (job.pattern === 'hang') for (;;);
    job.bytes += m.bytes.byteLength;
    return parentPort.postMessage({ type: 'more', more: job.bytes < 10 });
  }
  const partial = m.timedOut ? { reason: 'time' } : job.bytes >= 10 ? { reason: 'bytes' } : null;
  parentPort.postMessage({ type: 'result', result: { matches: [], truncated: partial !== null, partial, scannedBytes: job.bytes, scannedLines: 0, longLines: 0 } });
});
`;

const job = (overrides: Partial<GrepJob> = {}): GrepJob => ({
  pattern: 'x',
  ignoreCase: false,
  context: 0,
  limit: 10,
  maxScanBytes: 100,
  deadline: Date.now() + 5000,
  ...overrides,
});

/** Pieces of `sizes` bytes, each produced after `delayMs`; records how many were produced and whether it was closed. */
function pieces(sizes: number[], delayMs = 0) {
  const state = { produced: 0, closed: false };
  async function* generate() {
    try {
      for (const size of sizes) {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        state.produced++;
        yield new Uint8Array(size);
      }
    } finally {
      state.closed = true;
    }
  }
  return { iterator: generate(), state };
}

describe('GrepPool', () => {
  let dir: string;
  let script: string;
  const pools: GrepPool[] = [];
  const pool = (size: number, stuckGraceMs = 200) => {
    const created = new GrepPool(size, { script, stuckGraceMs });
    pools.push(created);
    return created;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'grep-pool-'));
    script = join(dir, 'fake-thread.js');
    writeFileSync(script, FAKE_THREAD);
  });

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('feeds every piece and returns the thread’s result', async () => {
    const source = pieces([2, 3, 4]);
    const result = await pool(1).run(job(), source.iterator);
    expect(result).toMatchObject({ partial: null, scannedBytes: 9 });
    expect(source.state).toEqual({ produced: 3, closed: true });
  });

  it('stops reading once the thread wants no more', async () => {
    const source = pieces([6, 6, 6, 6, 6]);
    const result = await pool(1).run(job(), source.iterator);
    expect(result).toMatchObject({ partial: { reason: 'bytes' }, scannedBytes: 12 });
    // One piece is read ahead while the thread scans: never more.
    expect(source.state.produced).toBeLessThanOrEqual(3);
    expect(source.state.closed).toBe(true);
  });

  it('stops at the deadline while pieces are slow to come, flagging time', async () => {
    const source = pieces([1, 1, 1, 1, 1, 1], 60);
    const started = Date.now();
    const result = await pool(1).run(job({ deadline: Date.now() + 100 }), source.iterator);
    expect(result.partial).toEqual({ reason: 'time' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(source.state.closed).toBe(true);
  });

  it('queues jobs beyond its threads, and a job whose deadline passes in the queue scans nothing', async () => {
    const shared = pool(1);
    const slow = pieces([1, 1, 1], 100);
    const waiting = pieces([1, 1]);
    const late = pieces([1]);
    const [first, second, third] = await Promise.all([
      shared.run(job(), slow.iterator),
      shared.run(job(), waiting.iterator),
      shared.run(job({ deadline: Date.now() + 50 }), late.iterator),
    ]);
    expect(first.scannedBytes).toBe(3);
    expect(second.scannedBytes).toBe(2);
    expect(third).toMatchObject({ partial: { reason: 'time' }, scannedBytes: 0 });
    expect(late.state.produced).toBe(0);
  });

  it('replaces a thread that stops answering, and keeps serving', async () => {
    const shared = pool(1);
    await expect(shared.run(job({ pattern: 'hang', deadline: Date.now() + 300 }), pieces([1]).iterator)).rejects.toBeInstanceOf(GrepThreadStuck);
    const result = await shared.run(job(), pieces([4]).iterator);
    expect(result.scannedBytes).toBe(4);
  });
});
