import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CitusSettings } from '@app/config';

export type MigrationOutcome = { applied: string[] } | { error: { message: string; code?: string } };

/**
 * runMigrations (migrate.ts) in a thread of its own. TypeORM and the
 * migrations are loaded only there and go with the thread's heap: loaded in
 * the API they stayed ~6 MiB of its live heap for its whole life, and the
 * heap peaks at about twice what is live (docs/decisions.md, "Round trips,
 * pass-through reads and memory"). A failure keeps its message and code.
 */
export function runMigrationsInThread(ownerUrl: string, { citus = null }: { citus?: CitusSettings | null } = {}): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(join(__dirname, 'migrate-thread.js'), { workerData: { ownerUrl, citus } });
    let outcome: MigrationOutcome | undefined;
    thread.once('message', (message: MigrationOutcome) => (outcome = message));
    thread.once('error', reject);
    thread.once('exit', (code) => {
      if (outcome && 'applied' in outcome) return resolve(outcome.applied);
      if (outcome) return reject(Object.assign(new Error(outcome.error.message), outcome.error.code ? { code: outcome.error.code } : {}));
      reject(new Error(`the migration thread exited with code ${code} before it answered`));
    });
  });
}
