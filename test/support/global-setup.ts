import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL, databaseUrl } from './env';

/** Migrates a template database once per run; each spec file clones it. */
export default async function globalSetup(): Promise<void> {
  process.env.SST_TEST_RUN ??= `${Math.floor(Date.now() / 1000)}_${process.pid}`;
  const template = `sst_test_template_${process.env.SST_TEST_RUN}`;
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    // Leftovers of runs killed before their teardown; names carry their birth
    // time, so a concurrent run's databases (younger than 3 hours) are left alone.
    const stale = await admin.query(`SELECT datname FROM pg_database WHERE datname ~ '^sst_test_(template_)?[0-9]+_'`);
    const cutoff = Math.floor(Date.now() / 1000) - 3 * 3600;
    for (const { datname } of stale.rows) {
      if (Number(/^sst_test_(?:template_)?(\d+)_/.exec(datname)![1]) < cutoff) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'src', 'migrate.js')], {
    env: { ...process.env, DATABASE_URL: databaseUrl(template) },
    stdio: 'pipe',
  });
}
