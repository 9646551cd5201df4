import { setTimeout as sleep } from 'node:timers/promises';

export interface PacingClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const realClock: PacingClock = { now: () => performance.now(), sleep: (ms, signal) => sleep(ms, undefined, { signal }) };

/**
 * Keeps a kind of background work to a share of wall time, as PostgreSQL's
 * cost-based vacuum delay keeps vacuum from starving queries: after a run
 * that took t ms, the next starts no sooner than t × (1 − share) / share
 * later. On a busy machine runs take longer and the pauses grow with them,
 * so the work's share of the cores stays bounded whatever the load. A
 * pause is at most `maxPauseMs`: a run slowed by waiting (a lock, a stalled
 * connection) used little CPU, and must not park the work for minutes. For
 * work that runs one at a time.
 */
export class DutyCycle {
  private nextStart = -Infinity;

  constructor(
    private readonly share: number,
    private readonly maxPauseMs: number,
    private readonly clock: PacingClock = realClock,
  ) {}

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const wait = this.nextStart - this.clock.now();
    if (wait > 0) await this.clock.sleep(wait, signal);
    const start = this.clock.now();
    try {
      return await work();
    } finally {
      const end = this.clock.now();
      this.nextStart = end + Math.min(this.maxPauseMs, ((end - start) * (1 - this.share)) / this.share);
    }
  }
}
