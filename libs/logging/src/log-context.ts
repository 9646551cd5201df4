import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields every log line written while serving one request or one job
 * carries (request id, tenant, session; queue, job id, marker seq). Code
 * deep in a use case logs through Nest's Logger and still gets them.
 */
export type LogFields = Record<string, string | number | undefined>;

const storage = new AsyncLocalStorage<LogFields>();

export const logContext = {
  /** Runs `work` with its own mutable set of fields. */
  run<T>(fields: LogFields, work: () => T): T {
    return storage.run(fields, work);
  },
  /** Adds fields to the current request's or job's set (learned later, e.g. the tenant after authentication). */
  assign(fields: LogFields): void {
    const current = storage.getStore();
    if (current) Object.assign(current, fields);
  },
  current(): LogFields | undefined {
    return storage.getStore();
  },
};
