import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hash partitions per table: a power of two, so a later split (8 → 16) moves
 * half of each. Not more: PostgreSQL 15 locks every partition of a cached
 * plan when it starts (before pruning), which cost each append transaction
 * about 0.03 ms at 8 partitions and 0.12 ms at 16 (docs/scaling.md).
 */
export const LOG_PARTITIONS = 8;

/** The tables that grow with use, in foreign-key order (a referenced table first). */
const PARTITIONED = ['session_events', 'tool_output_contents', 'tool_output_chunks', 'tool_output_refs'] as const;

interface TableShape {
  table: string;
  /** Primary key, unique constraints and plain indexes, as pg_get_*def wrote them. */
  indexes: Array<{ name: string; constraint: string | null; def: string }>;
  /** Every foreign key from or to the table: recreated once all tables are swapped. */
  foreignKeys: Array<{ table: string; name: string; def: string }>;
  triggers: string[];
  policies: string[];
  grants: string[];
}

/**
 * The event log and the tool-output cache become hash-partitioned by tenant.
 * Every key of these tables already leads with tenant_id, so the
 * partition key is in each primary key and unique constraint, and the same
 * schema can be distributed by tenant (docs/scaling.md). A tenant's rows live
 * in one partition: every query filters on `tenant_id = current_tenant()`,
 * which prunes to that partition when the executor starts.
 *
 * Applies on a populated database: each table is rebuilt as a partitioned
 * copy (rows copied, then indexes built), and its indexes, constraints,
 * foreign keys, triggers, row-level security policies and grants are read
 * from the catalog and recreated under their old names, so the migration
 * keeps whatever earlier migrations put there. It takes an exclusive lock on
 * these tables for the copy: run it in a maintenance window on a large
 * database (docs/scaling.md gives an online path).
 */
export class PartitionedLog1765200000000 implements MigrationInterface {
  name = 'PartitionedLog1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE ${PARTITIONED.join(', ')} IN ACCESS EXCLUSIVE MODE`);
    // RETURNING cannot read xmax on a partitioned table: the upsert of contents tells the rows
    // it created by their creating transaction instead (rows already there get this migration's).
    await q.query(`ALTER TABLE tool_output_contents ADD COLUMN created_xid xid8 NOT NULL DEFAULT pg_current_xact_id()`);
    const shapes: TableShape[] = [];
    for (const table of PARTITIONED) shapes.push(await readShape(q, table));
    const foreignKeys = new Map(shapes.flatMap((s) => s.foreignKeys).map((fk) => [`${fk.table}.${fk.name}`, fk]));

    for (const { table } of shapes) {
      await q.query(`CREATE TABLE ${table}_partitioned (LIKE ${table} INCLUDING ALL EXCLUDING INDEXES) PARTITION BY HASH (tenant_id)`);
      for (let i = 0; i < LOG_PARTITIONS; i++) {
        await q.query(`CREATE TABLE ${table}_p${i} PARTITION OF ${table}_partitioned FOR VALUES WITH (MODULUS ${LOG_PARTITIONS}, REMAINDER ${i})`);
        // Reached only through the parent; a direct query by the runtime roles finds no grant and no policy.
        await q.query(`ALTER TABLE ${table}_p${i} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY`);
      }
      await q.query(`INSERT INTO ${table}_partitioned OVERRIDING SYSTEM VALUE SELECT * FROM ${table}`);
    }
    // Dropping the old tables drops the foreign keys between them and from other tables.
    await q.query(`DROP TABLE ${[...PARTITIONED].reverse().join(', ')}`);
    for (const shape of shapes) {
      const { table } = shape;
      await q.query(`ALTER TABLE ${table}_partitioned RENAME TO ${table}`);
      for (const index of shape.indexes) {
        if (index.constraint) await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${index.name} ${index.constraint}`);
        else await q.query(index.def);
      }
      await q.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY`);
      for (const sql of [...shape.triggers, ...shape.policies, ...shape.grants]) await q.query(sql);
    }
    for (const fk of foreignKeys.values()) await q.query(`ALTER TABLE ${fk.table} ADD CONSTRAINT ${fk.name} ${fk.def}`);
    // The identity of the contents continues after the copied rows.
    await q.query(`SELECT setval(pg_get_serial_sequence('tool_output_contents', 'content_id'), coalesce((SELECT max(content_id) FROM tool_output_contents), 0) + 1, false)`);
    for (const table of PARTITIONED) await q.query(`ANALYZE ${table}`);
  }

  async down(): Promise<void> {
    throw new Error('PartitionedLog1765200000000 is not reversible: restore from a backup taken before it');
  }
}

async function readShape(q: QueryRunner, table: string): Promise<TableShape> {
  const indexes = await q.query(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def,
            CASE WHEN c.contype IN ('p', 'u') THEN pg_get_constraintdef(c.oid) END AS constraint
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
       LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
      WHERE x.indrelid = $1::regclass ORDER BY x.indisprimary DESC, i.relname`,
    [table],
  );
  const foreignKeys = await q.query(
    `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def
       FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND (conrelid = $1::regclass OR confrelid = $1::regclass)`,
    [table],
  );
  const triggers = await q.query(`SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, [table]);
  const policies = await q.query(
    `SELECT format('CREATE POLICY %I ON %I AS %s FOR %s TO %s%s%s', policyname, tablename, permissive, cmd,
                   array_to_string(roles, ', '),
                   ' USING (' || qual || ')', ' WITH CHECK (' || with_check || ')') AS def
       FROM pg_policies WHERE schemaname = 'public' AND tablename = $1`,
    [table],
  );
  const grants = await q.query(
    `SELECT format('GRANT %s ON %I TO %I', a.privilege_type, $1::text, g.rolname) AS def
       FROM pg_class c, aclexplode(c.relacl) a JOIN pg_roles g ON g.oid = a.grantee
      WHERE c.oid = $1::regclass AND a.grantee <> c.relowner
     UNION ALL
     SELECT format('GRANT %s (%I) ON %I TO %I', a.privilege_type, att.attname, $1::text, g.rolname)
       FROM pg_attribute att, aclexplode(att.attacl) a JOIN pg_roles g ON g.oid = a.grantee
      WHERE att.attrelid = $1::regclass AND att.attacl IS NOT NULL`,
    [table],
  );
  return {
    table,
    indexes: indexes.map((r: { name: string; def: string; constraint: string | null }) => r),
    foreignKeys,
    triggers: triggers.map((r: { def: string }) => r.def),
    policies: policies.map((r: { def: string }) => r.def),
    grants: grants.map((r: { def: string }) => r.def),
  };
}
