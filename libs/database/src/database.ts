import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { Pool, PoolClient, QueryResultRow, types } from 'pg';
import { DomainError } from '@app/domain';
import { DatabaseUnavailableError, isConnectionLoss } from './unavailable';

// seq, head and counts are bigint in SQL; they stay far below 2^53.
types.setTypeParser(types.builtins.INT8, (v) => Number(v));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The queries a use case runs inside one tenant transaction. */
export interface Tx {
  query<R extends QueryResultRow = Record<string, any>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** On a Citus coordinator (DATABASE_DISTRIBUTION=citus): the few statements Citus would spread over workers are written otherwise there. */
  readonly citus?: boolean;
}

/** How long a request may wait for a pooled connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Stale pooled connections tried at BEGIN before a transaction reports the database unavailable. */
const BEGIN_ATTEMPTS = 3;

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

/**
 * On a Citus coordinator, SET LOCAL commands (app.tenant_id, app.admin, app.usage_shard) are sent on to
 * the workers too, where the shards' row-level security policies read them; set_config() is not.
 */
const CITUS_BEGIN = `BEGIN; SET LOCAL citus.propagate_set_commands = 'local'`;

/** BEGIN with app.tenant_id set transaction-locally, in one message; the id is inlined, so it must be a checked UUID. */
function tenantBegin(tenantId: string, citus: boolean): string {
  if (!UUID.test(tenantId)) throw new Error('a tenant transaction needs a UUID tenant id');
  return `${citus ? CITUS_BEGIN : 'BEGIN'}; SET LOCAL app.tenant_id = '${tenantId}'`;
}

function txOf(client: PoolClient): Tx {
  return {
    query: async (sql, params) => (await client.query({ name: statementName(sql), text: sql, values: (params ?? []) as unknown[] })).rows,
  };
}

const routedTexts = new Map<string, string>();

/**
 * Citus routes a statement to one worker only when it can compute the
 * distribution column's value before execution: from a constant or a bound
 * parameter, not from `current_tenant()` (a setting read on the worker). So
 * on Citus every `current_tenant()` of a tenant statement becomes one more
 * parameter bound to the transaction's tenant; row-level security still
 * checks the same tenant on the worker, so a wrong binding finds nothing.
 */
function routedTx(tx: Tx, tenantId: string): Tx {
  return {
    citus: true,
    query: (sql, params = []) => {
      if (!sql.includes('current_tenant()')) return tx.query(sql, params);
      const key = `${params.length}:${sql}`;
      let text = routedTexts.get(key);
      if (!text) routedTexts.set(key, (text = sql.replaceAll('current_tenant()', `$${params.length + 1}::uuid`)));
      return tx.query(text, [...params, tenantId]);
    },
  };
}

/**
 * Statements a client is given together (in one synchronous run: BEGIN, a
 * statement and COMMIT of a one-round-trip transaction, a burst of inserts)
 * leave in one socket write. pg writes each statement on its own (it corks
 * around one statement, not across them), and on loopback each write is a
 * system call that also runs the receiving side's TCP work and wakes the
 * backend. The outer cork here is released in a microtask: a statement waits
 * only for the code that sent it and the microtasks already queued, never
 * for other requests' I/O, so a read's background COMMIT leaves before its
 * response is serialized.
 */
function coalesceWrites(client: PoolClient): void {
  const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream;
  const query = client.query;
  let corked = false;
  client.query = function (this: PoolClient, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      stream.cork();
      queueMicrotask(() => {
        corked = false;
        stream.uncork();
      });
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as PoolClient['query'];
}

/** How many pooled connections one tenant's transactions may hold at once (0 = no cap), and how long one waits for its turn. */
export interface TenantConnectionCap {
  capOf: (tenantId: string) => number;
  maxWaitMs: number;
}

/**
 * A semaphore per tenant in front of the pool: a tenant's transactions beyond
 * its cap wait here, in arrival order and holding no connection, so one
 * tenant cannot take the whole pool from the others. A wait beyond
 * maxWaitMs is refused: 429 `tenant_concurrency_limited`.
 */
class TenantSlots {
  private readonly tenants = new Map<string, { held: number; waiting: Array<() => void> }>();

  constructor(private readonly cap: TenantConnectionCap) {}

  async acquire(tenantId: string): Promise<void> {
    let state = this.tenants.get(tenantId);
    if (!state) this.tenants.set(tenantId, (state = { held: 0, waiting: [] }));
    if (this.hasRoom(tenantId, state.held)) {
      state.held++;
      return;
    }
    const { waiting } = state;
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(grant), 1);
        reject(
          new DomainError(
            'rate_limited',
            'tenant_concurrency_limited',
            `This tenant's requests already hold ${this.cap.capOf(tenantId)} database connections; none came free within ${this.cap.maxWaitMs} ms`,
            { retryAfter: 1 },
          ),
        );
      }, this.cap.maxWaitMs);
      waiting.push(grant);
    });
  }

  release(tenantId: string): void {
    const state = this.tenants.get(tenantId)!;
    state.held--;
    while (state.waiting.length > 0 && this.hasRoom(tenantId, state.held)) {
      state.held++;
      state.waiting.shift()!();
    }
    if (state.held === 0) this.tenants.delete(tenantId);
  }

  private hasRoom(tenantId: string, held: number): boolean {
    const cap = this.cap.capOf(tenantId);
    return cap === 0 || held < cap;
  }
}

/**
 * A pool of connections as one database role, and the only way to run
 * tenant-scoped SQL: `tenantTx` opens a transaction with app.tenant_id set
 * transaction-locally, so a pooled connection never carries a tenant over.
 */
export class Database {
  readonly pool: Pool;
  private tenantSlots: TenantSlots | undefined;

  /** `citus`: the database is a Citus coordinator (DATABASE_DISTRIBUTION=citus). */
  constructor(
    url: string,
    poolSize: number,
    applicationName: string,
    private readonly citus = false,
  ) {
    this.pool = new Pool({
      connectionString: url,
      max: poolSize,
      application_name: applicationName,
      statement_timeout: 30_000,
      // A request waiting for a connection that never comes (server gone silent, pool exhausted) fails instead of hanging.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Detects a peer that vanished without closing the socket (host crash, cut network).
      keepAlive: true,
      // Statements are sent without waiting for the previous answer (BEGIN with the first statement; see transaction()).
      pipeline: true,
    });
    // An idle client that loses its server must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
    // pg-pool listens for errors only while a client is idle: a checked-out one whose server ends
    // the session (restart, idle_in_transaction_session_timeout, pg_terminate_backend) would emit
    // an unhandled 'error' and take the process down. Its next query fails, and transaction() destroys it.
    this.pool.on('connect', (client) => {
      client.on('error', () => undefined);
      coalesceWrites(client);
    });
  }

  /** Caps each tenant's concurrent transactions in this process (the API does; the worker's concurrency is bounded already). */
  capTenantConnections(cap: TenantConnectionCap): void {
    this.tenantSlots = new TenantSlots(cap);
  }

  async tenantTx<T>(tenantId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.withTenantSlot(tenantId, () => this.transaction(tenantBegin(tenantId, this.citus), this.routed(tenantId, work), 'await'));
  }

  /**
   * A transaction that only reads: its answer is final once `work` returns,
   * so the caller gets it without waiting for COMMIT's round trip (the
   * connection goes back to the pool when COMMIT completes).
   */
  async tenantRead<T>(tenantId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.withTenantSlot(tenantId, () => this.transaction(tenantBegin(tenantId, this.citus), this.routed(tenantId, work), 'background'));
  }

  /**
   * A transaction in one round trip: BEGIN, the statements `work` sends and
   * COMMIT go out together, COMMIT without waiting for their answers. Only
   * for statements that decide for themselves: each writes exactly when
   * nothing the caller would check refuses it (the conditions are in its
   * SQL; otherwise it writes nothing, or fails and the COMMIT rolls back).
   * `work` must send every statement before its first `await`; one sent
   * later is refused.
   */
  async tenantOneTrip<T>(tenantId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.withTenantSlot(tenantId, () => this.transaction(tenantBegin(tenantId, this.citus), this.routed(tenantId, work), 'pipelined'));
  }

  /** A transaction with no tenant set: every tenant table reads as empty. */
  async systemTx<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.transaction(this.citus ? CITUS_BEGIN : 'BEGIN', work, 'await');
  }

  private routed<T>(tenantId: string, work: (tx: Tx) => Promise<T>): (tx: Tx) => Promise<T> {
    return this.citus ? (tx) => work(routedTx(tx, tenantId)) : work;
  }

  private async withTenantSlot<T>(tenantId: string, run: () => Promise<T>): Promise<T> {
    const slots = this.tenantSlots;
    await slots?.acquire(tenantId);
    try {
      return await run();
    } finally {
      slots?.release(tenantId);
    }
  }

  /**
   * Runs `work` in a transaction. The connection pipelines: BEGIN goes out
   * with the work's first statement instead of a round trip ahead of it (a
   * failed BEGIN fails every statement queued behind it, so nothing runs
   * outside the transaction). A lost connection surfaces as
   * DatabaseUnavailableError and the connection is destroyed, never returned
   * to the pool. When the loss shows at BEGIN, nothing was written: that is a
   * pooled connection the server closed while it sat idle (after a restart
   * the pool holds several), so the transaction starts over on another one.
   * With `commit: 'background'` (reads), the result is returned while COMMIT
   * is in flight; with 'pipelined' (tenantOneTrip), COMMIT goes out right
   * behind the statements `work` sent before its first await.
   */
  private async transaction<T>(begin: string, work: (tx: Tx) => Promise<T>, commit: 'await' | 'background' | 'pipelined'): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      // Settles to the error BEGIN met, if any; awaited on every path, so never an unhandled rejection.
      const begun = client.query(begin).then(
        () => undefined,
        (error: unknown) => error ?? new Error('BEGIN failed'),
      );
      let released = false;
      const release = (broken: boolean) => {
        if (!released) client.release(broken);
        released = true;
      };
      try {
        const tx = txOf(client);
        let committed: Promise<unknown> | undefined;
        const working = work(
          commit === 'pipelined' ? { query: (sql, params) => (committed ? Promise.reject(new Error('a statement sent after a pipelined COMMIT')) : tx.query(sql, params)) } : tx,
        );
        if (commit === 'pipelined') {
          committed = client.query('COMMIT');
          // Awaited below on success; on a failure, the ROLLBACK behind it answers (a no-op after COMMIT).
          committed.catch(() => undefined);
        }
        const result = await working;
        const beginError = await begun;
        if (beginError) throw beginError;
        committed ??= client.query('COMMIT');
        if (commit !== 'background') {
          await committed;
        } else {
          released = true;
          // A read's COMMIT cannot lose it anything; a connection that failed it is not reused.
          committed.then(
            () => client.release(),
            () => client.release(true),
          );
        }
        return result;
      } catch (error) {
        const beginError = await begun;
        let broken = isConnectionLoss(error) || isConnectionLoss(beginError);
        if (!broken) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
        }
        release(broken);
        if (broken && beginError !== undefined && attempt < BEGIN_ATTEMPTS) continue;
        throw isConnectionLoss(error) ? new DatabaseUnavailableError(error) : error;
      } finally {
        release(false);
      }
    }
  }

  private async connect(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw isConnectionLoss(error) ? new DatabaseUnavailableError(error) : error;
    }
  }

  async ping(): Promise<void> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query('SELECT 1');
    } catch (error) {
      broken = true;
      throw isConnectionLoss(error) ? new DatabaseUnavailableError(error) : error;
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** PostgreSQL SQLSTATE of an error thrown by pg, if any. */
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
