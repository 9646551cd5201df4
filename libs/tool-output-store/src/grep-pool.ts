import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { GrepResult } from '@app/domain/tool-output';
import type { GrepReply, GrepRequest } from './grep-protocol';

/** What one grep runs with; `deadline` is a Date.now() value (the time cap counts from the request). */
export interface GrepJob {
  pattern: string;
  ignoreCase: boolean;
  context: number;
  limit: number;
  maxScanBytes: number;
  deadline: number;
}

export interface GrepPoolOptions {
  /** The thread's script (the compiled grep-worker by default). */
  script?: string;
  /** A thread that has not answered this long after the deadline is presumed stuck and replaced. */
  stuckGraceMs?: number;
}

export class GrepThreadStuck extends Error {}

class GrepThread {
  private readonly worker: Worker;
  private readonly waiting: Array<{ resolve: (reply: GrepReply) => void; reject: (error: Error) => void }> = [];
  alive = true;

  constructor(script: string) {
    this.worker = new Worker(script);
    this.worker.unref();
    this.worker.on('message', (reply: GrepReply) => this.waiting.shift()?.resolve(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', () => this.fail(new Error('grep thread exited')));
  }

  call(request: GrepRequest, timeoutMs: number): Promise<GrepReply> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new GrepThreadStuck('grep thread did not answer in time'));
      }, timeoutMs);
      this.waiting.push({
        resolve: (reply) => {
          clearTimeout(timer);
          if (reply.type === 'error') reject(new Error(reply.message));
          else resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.worker.postMessage(request, request.type === 'piece' ? transferList(request.bytes) : []);
    });
  }

  private fail(error: Error): void {
    if (this.alive) {
      this.alive = false;
      void this.worker.terminate();
    }
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }

  terminate(): Promise<number> {
    this.alive = false;
    return this.worker.terminate();
  }
}

/** Moves a buffer's memory to the thread when it owns all of it (never a slice of Node's shared pool). */
function transferList(bytes: Uint8Array): ArrayBuffer[] {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return whole ? [bytes.buffer as ArrayBuffer] : [];
}

/** Nothing scanned: the time cap passed while the grep waited for a free thread. */
const timedOutBeforeStart = (): GrepResult => ({
  matches: [],
  truncated: true,
  partial: { reason: 'time' },
  scannedBytes: 0,
  scannedLines: 0,
  longLines: 0,
});

/**
 * A fixed number of grep threads. The caller's pieces (chunks read from the
 * database on the main thread) are posted one at a time, the next one being
 * fetched while the thread scans the current one; the scan stops at the first
 * cap the thread reaches, or at the deadline once the piece being fetched has
 * arrived (a fetch is one short query).
 */
export class GrepPool {
  private readonly idle: GrepThread[] = [];
  private readonly waiters: Array<(thread: GrepThread | null) => void> = [];
  private readonly script: string;
  private readonly stuckGraceMs: number;
  private threads = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    options: GrepPoolOptions = {},
  ) {
    this.script = options.script ?? join(__dirname, 'grep-worker.js');
    this.stuckGraceMs = options.stuckGraceMs ?? 2000;
  }

  async run(job: GrepJob, pieces: AsyncIterator<Uint8Array>): Promise<GrepResult> {
    const thread = await this.acquire(job.deadline);
    if (!thread) {
      await pieces.return?.();
      return timedOutBeforeStart();
    }
    const answerWithin = () => Math.max(0, job.deadline - Date.now()) + this.stuckGraceMs;
    try {
      await thread.call({ type: 'start', ...job }, answerWithin());
      let timedOut = false;
      let next = pieces.next();
      try {
        for (;;) {
          const item = await next;
          if (item.done) break;
          if (Date.now() >= job.deadline) {
            timedOut = true;
            break;
          }
          next = pieces.next();
          const reply = await thread.call({ type: 'piece', bytes: item.value }, answerWithin());
          if (reply.type === 'more' && !reply.more) break;
        }
      } finally {
        await next.catch(() => undefined);
        await pieces.return?.();
      }
      const reply = await thread.call({ type: 'finish', timedOut }, answerWithin());
      return (reply as Extract<GrepReply, { type: 'result' }>).result;
    } finally {
      this.release(thread);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter(null);
    await Promise.all(this.idle.splice(0).map((thread) => thread.terminate()));
  }

  private acquire(deadline: number): Promise<GrepThread | null> {
    if (this.closed) return Promise.resolve(null);
    const thread = this.idle.pop();
    if (thread) return Promise.resolve(thread);
    if (this.threads < this.size) {
      this.threads++;
      return Promise.resolve(new GrepThread(this.script));
    }
    return new Promise((resolve) => {
      const waiter = (found: GrepThread | null) => {
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
        resolve(null);
      }, Math.max(0, deadline - Date.now()));
      this.waiters.push(waiter);
    });
  }

  private release(thread: GrepThread): void {
    // A thread that failed or was stuck is gone; a new one takes its place when needed.
    const usable = thread.alive && !this.closed ? thread : null;
    if (!usable) this.threads--;
    const waiter = this.waiters.shift();
    if (waiter) {
      if (usable) return waiter(usable);
      this.threads++;
      return waiter(new GrepThread(this.script));
    }
    if (usable) this.idle.push(usable);
    else if (thread.alive) void thread.terminate();
  }
}
