import { createHash } from 'node:crypto';
import { Pool, PoolClient, QueryResultRow, types } from 'pg';

// seq, head and counts are bigint in SQL; they stay far below 2^53.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The queries a use case runs inside one tenant transaction. */
export interface Tx {
  query<R extends QueryResultRow = Record<string, any>>(sql: string, params?: unknown[]): Promise<R[]>;
}

const statementNames = new Map<string, string>();

/**
 * Every statement runs as a named prepared statement: PostgreSQL parses and
 * plans it once per connection instead of per call (a third of the
 * database's CPU on the append path). Our SQL texts are constant templates,
 * so the set of names is small and bounded.
 */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `s${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    statementNames.set(sql, name);
  }
  return name;
}

function txOf(client: PoolClient): Tx {
  return {
    query: async (sql, params) => (await client.query({ name: statementName(sql), text: sql, values: (params ?? []) as unknown[] })).rows,
  };
}

/**
 * A pool of connections as one database role, and the only way to run
 * tenant-scoped SQL: `tenantTx` opens a transaction with app.tenant_id set
 * transaction-locally, so a pooled connection never carries a tenant over.
 */
export class Database {
  readonly pool: Pool;

  constructor(url: string, poolSize: number, applicationName: string) {
    this.pool = new Pool({ connectionString: url, max: poolSize, application_name: applicationName, statement_timeout: 30_000 });
    // An idle client that loses its server must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  async tenantTx<T>(tenantId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    // The tenant id is inlined so BEGIN and set_config share one round trip; it is a checked UUID.
    if (!UUID.test(tenantId)) throw new Error('tenantTx needs a UUID tenant id');
    return this.transaction(`BEGIN; SELECT set_config('app.tenant_id', '${tenantId}', true)`, work);
  }

  /** A transaction with no tenant set: every tenant table reads as empty. */
  async systemTx<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction('BEGIN', work);
  }

  private async transaction<T>(begin: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query(begin);
      const result = await work(txOf(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** PostgreSQL SQLSTATE of an error thrown by pg, if any. */
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
