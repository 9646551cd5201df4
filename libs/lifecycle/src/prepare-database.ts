import type { AppConfig } from '@app/config';
import { ensureDatabase, runMigrationsInThread } from '@app/database';
import { requireService } from './startup-checks';

/**
 * Creates the database if absent and migrates it (and distributes it on a Citus coordinator);
 * a failure names DATABASE_URL, its host and the cause. Returns the migrations applied.
 */
export function prepareDatabase({ ownerUrl, citus }: AppConfig['database']): Promise<string[]> {
  return requireService('DATABASE_URL', 'PostgreSQL', ownerUrl, 5432, async () => {
    await ensureDatabase(ownerUrl);
    return runMigrationsInThread(ownerUrl, { citus });
  });
}
