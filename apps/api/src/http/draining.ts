import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Whether this API process has begun to drain (SIGTERM). Requests that wait
 * on something outside themselves (`compactions {wait}`, `context?wait=`)
 * stop waiting when it begins and answer with what they have, so they are
 * answered before the server closes, not cut with it.
 */
@Injectable()
export class Draining {
  private readonly controller = new AbortController();
  /** Settles when draining begins; never otherwise. */
  readonly began: Promise<void> = new Promise((resolve) => this.controller.signal.addEventListener('abort', () => resolve(), { once: true }));

  get active(): boolean {
    return this.controller.signal.aborted;
  }

  begin(): void {
    this.controller.abort();
  }

  /** Waits `ms`, or less once draining begins. */
  async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.controller.signal }).catch(() => undefined);
  }
}
