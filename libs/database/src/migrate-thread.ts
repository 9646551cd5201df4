import { parentPort, workerData } from 'node:worker_threads';
import type { CitusSettings } from '@app/config';
import { runMigrations } from './migrate';
import type { MigrationOutcome } from './migrate-in-thread';

/** The thread runMigrationsInThread starts: one run, its outcome posted back. */
const { ownerUrl, citus } = workerData as { ownerUrl: string; citus: CitusSettings | null };
runMigrations(ownerUrl, { citus }).then(
  (applied) => parentPort!.postMessage({ applied } satisfies MigrationOutcome),
  (error: Error & { code?: unknown }) =>
    parentPort!.postMessage({ error: { message: error.message, code: typeof error.code === 'string' ? error.code : undefined } } satisfies MigrationOutcome),
);
