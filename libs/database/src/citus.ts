import type { Client } from 'pg';
import type { CitusSettings } from '@app/config';

/** The one table every per-tenant table is co-located with. */
const ANCHOR = 'tenants';
/** TypeORM's bookkeeping: read and written by the migration runner on the coordinator only. */
const COORDINATOR_ONLY = new Set(['schema_migrations']);

interface TableRow {
  table: string;
  tenant: boolean;
  /** The tables its foreign keys reference, itself excluded. */
  references: string[];
}

/**
 * Makes the migrated schema a distributed one on a Citus coordinator
 * (DATABASE_DISTRIBUTION=citus); runs after every migration run, under the
 * migration lock, and only distributes what is not yet distributed:
 *
 * - every table with a tenant_id column is distributed by it, co-located
 *   with `tenants`, so a tenant's rows of every table share a worker and
 *   their foreign keys, cascades, unique keys and row-level security hold
 *   on that worker (each key already leads with tenant_id); hash-partitioned
 *   tables are distributed with their partitions;
 * - any other table but the migration runner's own is a reference table
 *   (a copy on every node); the schema has none today;
 * - referenced tables first, as Citus requires.
 *
 * The usage triggers run on the shards, which Citus allows only with
 * `citus.enable_unsafe_triggers` at distribution time; migration
 * 1765800000000 made them safe there (each upserts the co-located
 * tenant_usage shard).
 */
export async function distributeOnCitus(owner: Client, settings: CitusSettings): Promise<void> {
  const { rows } = await owner.query<TableRow>(
    `SELECT c.relname AS table,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS tenant,
            coalesce((SELECT array_agg(DISTINCT f.confrelid::regclass::text) FROM pg_constraint f
                       WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid), '{}') AS references
       FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND NOT EXISTS (SELECT 1 FROM pg_dist_partition d WHERE d.logicalrelid = c.oid)`,
  );
  const pending = new Map(rows.filter((r) => !COORDINATOR_ONLY.has(r.table)).map((r) => [r.table, r]));
  await owner.query('BEGIN');
  try {
    await owner.query(`SET LOCAL citus.shard_count = ${Number(settings.shardCount)}`);
    await owner.query(`SET LOCAL citus.enable_unsafe_triggers = on`);
    while (pending.size > 0) {
      const ready = [...pending.values()].filter((r) => r.references.every((ref) => !pending.has(ref) || ref === r.table));
      if (ready.length === 0) throw new Error(`cannot order the tables to distribute (a foreign-key cycle among ${[...pending.keys()].join(', ')})`);
      // The anchor first: the others are co-located with it.
      ready.sort((a, b) => Number(b.table === ANCHOR) - Number(a.table === ANCHOR) || a.table.localeCompare(b.table));
      const next = ready[0];
      if (!next.tenant) {
        await owner.query(`SELECT create_reference_table($1)`, [next.table]);
      } else if (next.table === ANCHOR) {
        await owner.query(`SELECT create_distributed_table($1, 'tenant_id', colocate_with => 'none')`, [next.table]);
      } else {
        await owner.query(`SELECT create_distributed_table($1, 'tenant_id', colocate_with => $2)`, [next.table, ANCHOR]);
      }
      pending.delete(next.table);
    }
    await owner.query('COMMIT');
  } catch (error) {
    await owner.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * DATABASE_DISTRIBUTION=citus on a database that is no Citus coordinator
 * ready to hold shards: refused before any migration runs there.
 */
export async function requireCitus(owner: Client): Promise<void> {
  const { rows: extension } = await owner.query(`SELECT extversion FROM pg_extension WHERE extname = 'citus'`);
  if (extension.length === 0) {
    throw new Error('DATABASE_DISTRIBUTION=citus, but this database has no citus extension: CREATE EXTENSION citus on the coordinator and every worker, and register the workers (citus_add_node)');
  }
  const { rows: workers } = await owner.query(`SELECT count(*)::int AS n FROM citus_get_active_worker_nodes()`);
  const { rows: coordinatorShards } = await owner.query(`SELECT count(*)::int AS n FROM pg_dist_node WHERE groupid = 0 AND shouldhaveshards`);
  if (workers[0].n === 0 && coordinatorShards[0].n === 0) {
    throw new Error('DATABASE_DISTRIBUTION=citus, but the coordinator has no worker to place shards on: register the workers with citus_add_node');
  }
}
