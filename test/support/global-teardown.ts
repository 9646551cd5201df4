import { Client } from 'pg';
import { ADMIN_DATABASE_URL } from './env';

export default async function globalTeardown(): Promise<void> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "sst_test_template_${process.env.SST_TEST_RUN}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
