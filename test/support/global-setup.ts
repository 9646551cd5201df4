import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL, databaseUrl } from './env';

/** Migrates a template database once per run; each spec file clones it. */
export default async function globalSetup(): Promise<void> {
  process.env.SST_TEST_RUN ??= `${process.pid}`;
  const template = `sst_test_template_${process.env.SST_TEST_RUN}`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    // Leftovers of runs that were killed before their teardown.
    const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'sst\\_test\\_%'`);
    for (const { datname } of stale.rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'src', 'migrate.js')], {
    env: { ...process.env, DATABASE_URL: databaseUrl(template) },
    stdio: 'pipe',
  });
}
