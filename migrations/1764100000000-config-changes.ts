import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenant defaults become editable by the runtime role (the admin API); sessions' config already was. */
export class ConfigChanges1764100000000 implements MigrationInterface {
  name = 'ConfigChanges1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`GRANT UPDATE (config) ON tenants TO session_store_app`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`REVOKE UPDATE (config) ON tenants FROM session_store_app`);
  }
}
