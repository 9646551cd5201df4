import { Client } from 'pg';

// A host that drops packets would otherwise hang start-up without a word.
export const CONNECT_TIMEOUT_MS = 5000;

/** Creates the database named in `ownerUrl` when it does not exist yet. */
export async function ensureDatabase(ownerUrl: string): Promise<void> {
  const target = new URL(ownerUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(ownerUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((e: { code?: string }) => {
        // Created meanwhile by another process: 42P04, or 23505 when both inserted into pg_database at once.
        if (e.code !== '42P04' && e.code !== '23505') throw e;
      });
    }
  } finally {
    await client.end();
  }
}
