import { EventEmitter } from 'node:events';
import type { ProcessHandle } from './service';

/**
 * `promise`, or a rejection naming `what` when `timeoutMs` passes first or,
 * given a process, when it ends first (its output in the message): an event
 * that never comes fails the test with a reason, not the test's own timeout.
 */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 30_000, handle?: ProcessHandle): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${handle ? `\n${handle.output()}` : ''}`)), timeoutMs);
    handle?.closed.then(() => reject(new Error(`${what}: the process exited first (${handle.child.signalCode ?? `code ${handle.child.exitCode}`})\n${handle.output()}`)));
  });
  try {
    return await Promise.race([promise, failed]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first value `check` returns other than undefined, checked now and at each `event` of `emitter`, within the time. */
export function whenever<T>(emitter: EventEmitter, event: string, check: () => T | undefined, what: string, timeoutMs = 30_000, handle?: ProcessHandle): Promise<T> {
  let listener = () => undefined as void;
  const found = new Promise<T>((resolve, reject) => {
    listener = () => {
      try {
        const value = check();
        if (value !== undefined) resolve(value);
      } catch (error) {
        reject(error);
      }
    };
    emitter.on(event, listener);
    listener();
  });
  return within(found, what, timeoutMs, handle).finally(() => emitter.off(event, listener));
}

/** What a test double records as it happens (a stub's requests), with a way to await an entry. */
export class Recorded<T> {
  readonly items: T[] = [];
  private readonly added = new EventEmitter();

  push(item: T): void {
    this.items.push(item);
    this.added.emit('added');
  }

  /** The first entry, recorded already or still to come, that satisfies `predicate`. */
  first(predicate: (item: T, index: number) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
    return whenever(this.added, 'added', () => this.items.find(predicate), what, timeoutMs);
  }
}
