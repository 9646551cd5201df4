import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_DATABASE_URL, databaseUrl, TEMPLATE_DB } from './env';

async function admin<T>(work: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

/** A fresh database cloned from the migrated template; drop it after the spec. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `sst_test_${Math.floor(Date.now() / 1000)}_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** A client as an arbitrary role of the test database (owner by default). */
export async function connectAs(dbUrl: string, user?: string): Promise<Client> {
  const url = new URL(dbUrl);
  if (user) url.username = user;
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  return client;
}
