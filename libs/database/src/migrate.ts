import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { CitusSettings } from '@app/config';
import { MIGRATIONS } from '../../../migrations';
import { distributeOnCitus, requireCitus } from './citus';
import { CONNECT_TIMEOUT_MS } from './ensure-database';

// Any constant shared by every process that migrates this database.
const MIGRATION_LOCK_KEY = 7_461_001;

/**
 * Applies pending migrations under a session advisory lock, so API and
 * worker replicas starting together migrate once. Returns the names applied.
 * `migrations` is the whole list but in tests of a migration on a populated schema.
 * With `citus`, the schema is then distributed (citus.ts), under the same lock.
 */
export async function runMigrations(
  ownerUrl: string,
  { migrations = MIGRATIONS, citus = null }: { migrations?: typeof MIGRATIONS; citus?: CitusSettings | null } = {},
): Promise<string[]> {
  const lock = new Client({ connectionString: ownerUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (citus) await requireCitus(lock);
    const dataSource = new DataSource({
      type: 'postgres',
      url: ownerUrl,
      migrations,
      migrationsTableName: 'schema_migrations',
      migrationsTransactionMode: 'all',
      synchronize: false,
      logging: false,
    });
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'all' });
      if (citus) await distributeOnCitus(lock, citus);
      return applied.map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
