/** Where tests find PostgreSQL and Redis (override with DATABASE_URL / REDIS_URL). */
export const ADMIN_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEMPLATE_DB = `sst_test_template_${process.env.SST_TEST_RUN ?? 'local'}`;
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
