/**
 * A grep thread: runs one `GrepScanner` at a time over the pieces the main
 * thread posts, so a long or adversarial scan never blocks the event loop.
 * Every message gets exactly one reply, in order.
 */
import { parentPort } from 'node:worker_threads';
import { compileGrepPattern, GrepScanner } from '@app/domain/tool-output';
import type { GrepReply, GrepRequest } from './grep-protocol';

let scanner: GrepScanner | null = null;

function handle(message: GrepRequest): GrepReply {
  switch (message.type) {
    case 'start': {
      const { pattern, ignoreCase, context, limit, maxScanBytes, deadline } = message;
      // Date.now is shared by all threads, so the scanner stops at the request's own deadline.
      scanner = new GrepScanner(compileGrepPattern(pattern, { ignoreCase }), {
        context,
        limit,
        maxScanBytes,
        timeLimitMs: deadline - Date.now(),
        now: Date.now,
      });
      return { type: 'started' };
    }
    case 'piece':
      return { type: 'more', more: scanner!.push(message.bytes) };
    case 'finish': {
      // An empty piece after the deadline makes the scanner record that it stopped for time.
      if (message.timedOut) scanner!.push('');
      const result = scanner!.finish();
      scanner = null;
      return { type: 'result', result };
    }
  }
}

parentPort!.on('message', (message: GrepRequest) => {
  try {
    parentPort!.postMessage(handle(message));
  } catch (error) {
    scanner = null;
    parentPort!.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
});
