import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { APP_ROLE } from '@app/config/load-config';
import { Database } from '@app/database/database';
import { createTestDatabase, TestDatabase } from '../../../../test/support/database';

/**
 * A fresh migrated database for store tests that run the store's SQL
 * directly, without HTTP: `db` opens tenant transactions as the service's
 * requests do (its role, row-level security keyed by the tenant), `tenant()`
 * adds a tenant row as the admin API would.
 */
export interface StoreDatabase {
  db: Database;
  tenant(): Promise<string>;
  close(): Promise<void>;
}

export async function storeDatabase(): Promise<StoreDatabase> {
  const database: TestDatabase = await createTestDatabase();
  const owner = new Client({ connectionString: database.url });
  await owner.connect();
  // The role the service's requests run as: row-level security applies to it (the owner's bypasses it).
  const appUrl = new URL(database.url);
  appUrl.username = APP_ROLE;
  appUrl.password = '';
  const db = new Database(appUrl.toString(), 4, 'store-int-spec');
  return {
    db,
    async tenant() {
      const tenantId = randomUUID();
      await owner.query('INSERT INTO tenants (tenant_id, name) VALUES ($1, $2)', [tenantId, `int-${tenantId.slice(0, 8)}`]);
      return tenantId;
    },
    async close() {
      await db.close();
      await owner.end();
      await database.drop();
    },
  };
}
