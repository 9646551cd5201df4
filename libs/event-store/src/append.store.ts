import { randomBytes } from 'node:crypto';
import { Tx } from '@app/database';
import { AlongsideRows, assertStoredEventData, CLIENT_EVENT_TYPES, EventRow, pivotMovedBy } from '@app/domain';
import type { SessionConfigs } from './session-row';

// The append's statements: the session lock with its event-id lookup, and the insert at the head.

export interface ExistingEvent {
  id: string;
  seq: number;
  payloadHash: Buffer;
}

/** The locked session's head and model, and whether it is archived (client appends are then refused). */
export interface LockedSession {
  headSeq: number;
  model: string;
  archived: boolean;
  existing: ExistingEvent[];
  /** The session's and its tenant's settings, when asked for (`withConfigs`): read by the lock's own statement. */
  configs?: SessionConfigs;
}

/**
 * Which stored events an append looks its ids up among: the whole log, or
 * only what a fork inherited (its own rows are guarded by the unique index,
 * inherited ones by nothing else), which costs a session that is no fork
 * nothing.
 */
export type EventIdLookup = 'log' | 'inherited';

/**
 * Locks the session row (the serialization point of appends). With
 * `eventIds`, also returns which of them are stored already (`lookup`), in a
 * second statement on purpose: under READ COMMITTED it takes a fresh
 * snapshot after the lock wait, so it sees the events of the writer it
 * waited for.
 */
export async function lockSessionForAppend(
  tx: Tx,
  sessionId: string,
  { eventIds, lookup = 'log', withConfigs = false }: { eventIds?: string[]; lookup?: EventIdLookup; withConfigs?: boolean } = {},
): Promise<LockedSession | undefined> {
  const [row] = await tx.query(
    withConfigs
      ? `SELECT s.head_seq, s.model, s.archived_at IS NOT NULL AS archived, s.lineage IS NOT NULL AS forked, s.config, t.config AS tenant_config
           FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id WHERE s.tenant_id = current_tenant() AND s.session_id = $1 FOR UPDATE OF s`
      : 'SELECT head_seq, model, archived_at IS NOT NULL AS archived, lineage IS NOT NULL AS forked FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1 FOR UPDATE',
    [sessionId],
  );
  if (!row) return undefined;
  // One index probe per id. `event_id = ANY($2)` let the planner, whenever its
  // row estimate for the session was low (a new tenant, stale statistics),
  // probe (tenant_id, session_id) only and filter every event of the session:
  // an append cost O(session length). LIMIT 1 keeps the subquery unflattened.
  // A fork probes each segment of its log (its own last).
  const existing = !eventIds || (lookup === 'inherited' && !row.forked)
    ? []
    : row.forked
      ? await tx.query(
          `SELECT e.event_id, e.seq, e.payload_hash
             FROM sessions s CROSS JOIN LATERAL session_segments(s.lineage, s.session_id) g
             CROSS JOIN unnest($2::text[]) AS wanted(id)
             CROSS JOIN LATERAL (
               SELECT event_id, seq, payload_hash FROM session_events
                WHERE tenant_id = current_tenant() AND session_id = g.source AND event_id = wanted.id
                  AND seq > g.after_seq AND seq <= g.through_seq
                LIMIT 1) e
            WHERE s.tenant_id = current_tenant() AND s.session_id = $1 AND ($3 OR g.origin <> s.session_id)`,
          [sessionId, eventIds, lookup === 'log'],
        )
      : await ownEvents(tx, sessionId, eventIds);
  return {
    headSeq: row.head_seq,
    model: row.model,
    archived: row.archived,
    existing: existing.map((e) => ({ id: e.event_id, seq: e.seq, payloadHash: e.payload_hash })),
    ...(withConfigs ? { configs: { model: row.model, config: row.config, tenantConfig: row.tenant_config } } : {}),
  };
}

/** Which of `eventIds` the session's own rows hold (inherited ones excluded): one index probe per id. */
export async function ownEvents(tx: Tx, sessionId: string, eventIds: readonly string[]): Promise<Array<{ event_id: string; seq: number; payload_hash: Buffer }>> {
  return tx.query(
    `SELECT e.event_id, e.seq, e.payload_hash
       FROM unnest($2::text[]) AS wanted(id)
       CROSS JOIN LATERAL (
         SELECT event_id, seq, payload_hash FROM session_events
          WHERE tenant_id = current_tenant() AND session_id = $1 AND event_id = wanted.id
          LIMIT 1) e`,
    [sessionId, eventIds],
  );
}

/** The unique constraint a statement violated, if that is how it failed. */
function violatedUnique(error: unknown): string | undefined {
  const e = error as { code?: string; constraint?: string; message?: string };
  if (e?.code !== '23505') return undefined;
  // Citus relays a worker's error without the constraint field: its name is then in the message.
  return e.constraint ?? /unique constraint "([^"]+)"/.exec(e.message ?? '')?.[1] ?? '';
}

/** The insert hit an event id the session already holds (a retry, or a reused id). */
export function isDuplicateEventId(error: unknown): boolean {
  // On the partitioned log (migration 1765200000000) the partition's index reports the violation; on Citus, the shard's (its id appended).
  return /^session_events(_p\d+)?_tenant_id_session_id_event_id_key(_\d+)?$/.test(violatedUnique(error) ?? '');
}

/** An append in one round trip met a state other than the one it assumed (append_expect): nothing was written. */
export function isFailedAppendExpectation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'SSA01';
}

/** The insert hit a tool call id the session's ledger holds (a retry, or a reused id). */
export function isDuplicateToolCallId(error: unknown): boolean {
  return /^session_tool_calls_pkey(_\d+)?$/.test(violatedUnique(error) ?? '');
}


/** Rows as the parameters of an insert's `ROWS FROM (unnest(ids), unnest(types), jsonb_array_elements(data), unnest(tokens), unnest(hashes))`. */
export function eventColumns(rows: readonly EventRow[]): [string[], string[], string, number[], Buffer[]] {
  return [
    rows.map((r) => r.event.id),
    rows.map((r) => r.event.type),
    // One JSON document, not a jsonb[]: pg escapes every element of an array literal in JS, which cost more than the insert.
    JSON.stringify(rows.map((r) => r.event.data)),
    rows.map((r) => r.tokens),
    rows.map((r) => r.payloadHash),
  ];
}

/** The chunks an append in one round trip writes at most, each a parameter of its statement (as insertChunks' batches). */
export const ONE_TRIP_MAX_CHUNKS = 32;

/**
 * The CTEs writing `rows` when the head query found the row, their parameters
 * numbered from `first`, and the condition the head's move adds.
 */
function alongsideCtes(rows: AlongsideRows | undefined, first: number): { ctes: string; check: string; params: unknown[] } {
  const ctes: string[] = [];
  const params: unknown[] = [];
  let check = '';
  const next = (value: unknown) => `$${first + params.push(value) - 1}`;
  if (rows && rows.calls.length > 0) {
    const { calls } = rows;
    ctes.push(`calls AS (
       INSERT INTO session_tool_calls (tenant_id, session_id, call_id, name, issued_seq, answered_seq)
       SELECT current_tenant(), $1, t.call_id, t.name, t.seq, t.answered
         FROM head, unnest(${next(calls.map((c) => c.callId))}::text[], ${next(calls.map((c) => c.name))}::text[], ${next(calls.map((c) => c.seq))}::bigint[], ${next(calls.map((c) => c.answeredSeq))}::bigint[]) AS t(call_id, name, seq, answered)
        WHERE head.seq IS NOT NULL)`);
  }
  if (rows && rows.inlineRefs.length > 0) {
    const refs = rows.inlineRefs;
    ctes.push(`refs AS (
       INSERT INTO tool_output_refs (tenant_id, ref_id, session_id, content_id, attached_seq)
       SELECT current_tenant(), t.ref_id, $1, NULL, t.seq
         FROM head, unnest(${next(refs.map((r) => r.refId))}::text[], ${next(refs.map((r) => r.attachedSeq))}::bigint[]) AS t(ref_id, seq)
        WHERE head.seq IS NOT NULL)`);
  }
  if (rows && rows.storedOutputs.length > 0) {
    // One content row per sha256, upserted in sha256 order (as upsertContents: two appends of the same outputs
    // lock them in the same order); an existing one is touched and locked, its chunks are not written again.
    const distinct = [...new Map(rows.storedOutputs.map((o) => [Buffer.from(o.sha256).toString('hex'), o])).values()].sort((a, b) => Buffer.compare(a.sha256, b.sha256));
    const token = next(randomBytes(8).readBigUInt64BE().toString());
    ctes.push(`contents AS (
       INSERT INTO tool_output_contents (tenant_id, sha256, byte_size, line_count, chunk_count, created_xid)
       SELECT current_tenant(), t.sha256, t.byte_size, t.line_count, t.chunk_count, ${token}::xid8
         FROM head, unnest(${next(distinct.map((o) => Buffer.from(o.sha256)))}::bytea[], ${next(distinct.map((o) => o.byteSize))}::bigint[], ${next(distinct.map((o) => o.lineCount))}::bigint[], ${next(distinct.map((o) => o.chunkCount))}::int[])
              WITH ORDINALITY AS t(sha256, byte_size, line_count, chunk_count, ord)
        WHERE head.seq IS NOT NULL
        ORDER BY t.ord
       ON CONFLICT (tenant_id, sha256) DO UPDATE SET last_used_at = excluded.last_used_at
       RETURNING content_id, sha256, created_xid)`);
    // Each chunk's bytes a binary parameter of its own (a bytea[] would go as hex text).
    const chunkRows = distinct.flatMap((o) =>
      o.chunks.map(
        (c) =>
          `(${next(Buffer.from(o.sha256))}::bytea, ${next(c.byteOffset)}::bigint, ${next(c.byteLength)}::int, ${next(c.firstLine)}::bigint, ${next(c.lineCount)}::int, ${next(Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength))}::bytea)`,
      ),
    );
    ctes.push(`chunks AS (
       INSERT INTO tool_output_chunks (tenant_id, content_id, byte_offset, byte_length, first_line, line_count, data)
       SELECT current_tenant(), c.content_id, v.byte_offset, v.byte_length, v.first_line, v.line_count, v.data
         FROM contents c JOIN (VALUES ${chunkRows.join(', ')}) AS v(sha256, byte_offset, byte_length, first_line, line_count, data) ON v.sha256 = c.sha256
        WHERE c.created_xid = ${token}::xid8)`);
    const outputs = rows.storedOutputs;
    ctes.push(`stored_refs AS (
       INSERT INTO tool_output_refs (tenant_id, ref_id, session_id, content_id, attached_seq)
       SELECT current_tenant(), r.ref_id, $1, c.content_id, r.seq
         FROM contents c JOIN unnest(${next(outputs.map((o) => o.refId))}::text[], ${next(outputs.map((o) => Buffer.from(o.sha256)))}::bytea[], ${next(outputs.map((o) => o.attachedSeq))}::bigint[]) AS r(ref_id, sha256, seq)
              ON r.sha256 = c.sha256)`);
  }
  if (rows && rows.answers.length > 0) {
    const { answers } = rows;
    // Each open call found by one index probe, then updated by its tuple id (recordToolCalls says why). A call
    // answered or unknown meanwhile fails the statement (append_expect): its events are in it already.
    ctes.push(`answered AS (
       UPDATE session_tool_calls c SET answered_seq = w.seq
         FROM (SELECT k.tbl, k.row, t.seq
                 FROM head, unnest(${next(answers.map((a) => a.callId))}::text[], ${next(answers.map((a) => a.seq))}::bigint[]) AS t(call_id, seq)
                 CROSS JOIN LATERAL (
                   SELECT tableoid AS tbl, ctid AS row FROM session_tool_calls
                    WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = t.call_id AND answered_seq IS NULL
                    LIMIT 1) k
                WHERE head.seq IS NOT NULL) w
        WHERE c.tenant_id = current_tenant() AND c.tableoid = w.tbl AND c.ctid = w.row
       RETURNING 1)`);
    check = ` AND append_expect((SELECT count(*) FROM answered) = ${next(answers.length)}, 'the answered calls were open')`;
  }
  return { ctes: ctes.map((cte) => `,\n     ${cte}`).join(''), check, params };
}

/**
 * The statement that writes events at head+1.. and moves the head, `head`
 * being a query of one row (`seq`) or none, which writes nothing; its
 * parameters after $8..$10 are the head query's own, then `alongside`'s.
 */
function insertAtHead(head: string, sessionId: string, events: readonly EventRow[], headParams: unknown[], alongside?: AlongsideRows): [string, unknown[]] {
  const pivot = checkedPivot(events);
  const extra = alongsideCtes(alongside, 10 + headParams.length);
  return [
    `WITH head AS (${head}),
     inserted AS (
       INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
       SELECT current_tenant(), $1, head.seq + ord, id, type, data, tokens, hash
         FROM head, ROWS FROM (unnest($2::text[]), unnest($3::text[]), jsonb_array_elements($4::jsonb), unnest($5::int[]), unnest($6::bytea[]))
              WITH ORDINALITY AS t(id, type, data, tokens, hash, ord)
        WHERE head.seq IS NOT NULL
       RETURNING 1)${extra.ctes}
     UPDATE sessions SET head_seq = (SELECT seq FROM head) + $7, updated_at = statement_timestamp(),
            pivot_seq = coalesce((SELECT seq FROM head) + $8, pivot_seq), covered_through_seq = coalesce($9, covered_through_seq)
      WHERE tenant_id = current_tenant() AND session_id = $1 AND (SELECT count(*) FROM inserted) = $7${extra.check}
     RETURNING head_seq`,
    [
      sessionId,
      ...eventColumns(events),
      events.length,
      pivot?.offset ?? null,
      pivot?.coveredThroughSeq ?? null,
      ...headParams,
      ...extra.params,
    ],
  ];
}

/** Checks what the service writes itself; returns where a compaction.completed among the events moves the pivot (pivotMovedBy). */
function checkedPivot(events: readonly EventRow[]): { offset: number; coveredThroughSeq: number } | null {
  // Client events passed the append's schemas; what the service writes itself meets the same published ones, or is not written.
  for (const [i, { event }] of events.entries()) if (!CLIENT_EVENT_TYPES.includes(event.type)) assertStoredEventData(event.type, event.data, `$[${i}].data`);
  return pivotMovedBy(events.map((e) => e.event));
}

/**
 * The session row a write at the head applies to: `condition` on its
 * columns (parameters from $2, `params`) and the head it writes after
 * (`head`, an expression on its columns and those parameters).
 */
interface HeadRow {
  condition: string;
  head: string;
  params: unknown[];
}

/**
 * insertAtHead on a Citus coordinator, as separate statements. Citus runs
 * the single statement's INSERT … SELECT from a CTE by broadcasting the
 * CTE's result to every worker, which makes each append a two-phase commit
 * across all of them; these statements each name the tenant's row, so every
 * one is routed to the tenant's worker over one connection (a one-worker
 * commit). Sent together, without waiting: `lock` first (when the caller
 * holds no lock yet), then the rows, read from the session row itself so
 * they are written only when `row.condition` holds, then the head moves
 * under the same condition. Undefined when nothing was written. The
 * events' time is the statement's, given explicitly: Citus runs an
 * INSERT … SELECT on the worker only when no column takes a volatile
 * default (created_at's clock_timestamp()), so a batch's events share one
 * time here.
 */
function insertAtHeadOnCitus(tx: Tx, sessionId: string, events: readonly EventRow[], row: HeadRow, lock: boolean): Promise<number | undefined> {
  const pivot = checkedPivot(events);
  const at = (i: number) => `$${row.params.length + 2 + i}`;
  const where = `tenant_id = current_tenant() AND session_id = $1 AND ${row.condition}`;
  const locked = lock ? tx.query(`SELECT 1 FROM sessions WHERE ${where} FOR UPDATE`, [sessionId, ...row.params]) : undefined;
  const inserted = tx.query(
    `INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash, created_at)
     SELECT tenant_id, session_id, ${row.head} + t.ord, t.id, t.type, t.data, t.tokens, t.hash, statement_timestamp()
       FROM sessions, ROWS FROM (unnest(${at(0)}::text[]), unnest(${at(1)}::text[]), jsonb_array_elements(${at(2)}::jsonb), unnest(${at(3)}::int[]), unnest(${at(4)}::bytea[]))
            WITH ORDINALITY AS t(id, type, data, tokens, hash, ord)
      WHERE ${where}`,
    [
      sessionId,
      ...row.params,
      ...eventColumns(events),
    ],
  );
  const moved = tx.query(
    `UPDATE sessions SET head_seq = ${row.head} + ${at(0)}::int, updated_at = statement_timestamp(),
            pivot_seq = coalesce(${row.head} + ${at(1)}::int, pivot_seq), covered_through_seq = coalesce(${at(2)}::bigint, covered_through_seq)
      WHERE ${where}
     RETURNING head_seq`,
    [sessionId, ...row.params, events.length, pivot?.offset ?? null, pivot?.coveredThroughSeq ?? null],
  );
  return Promise.all([locked, inserted, moved]).then(([, , [head]]) => head?.head_seq);
}

/**
 * Writes events at head+1.. and moves the head in one statement; a
 * compaction.completed among them moves the pivot the context read starts
 * from (pivotMovedBy). Must run after lockSessionForAppend in the same transaction. With
 * `headSeq` null the statement reads the head from the session row itself,
 * so it can be sent before the lock's answer has come back (pipelined
 * behind it). Returns the new head.
 */
export async function insertEvents(tx: Tx, sessionId: string, headSeq: number | null, events: readonly EventRow[]): Promise<number> {
  const moved = tx.citus
    ? await insertAtHeadOnCitus(tx, sessionId, events, { condition: 'true', head: 'coalesce($2::bigint, head_seq)', params: [headSeq] }, false)
    : (await tx.query(...insertAtHead('SELECT coalesce($10::bigint, (SELECT head_seq FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1)) AS seq', sessionId, events, [headSeq])))[0]?.head_seq;
  if (moved === undefined) throw new Error(`session ${sessionId}: the events were not written at its head`);
  return moved;
}

/** The session row as this process last saw it: what an append in one round trip is written under. */
export interface ExpectedSession {
  headSeq: number;
  model: string;
  /** The row's creation, to the millisecond: a session deleted and created again under the same id is another row. */
  createdAt: Date;
  /** The session's and tenant's settings the rows were built from (tool-output views), when they were. */
  configs?: SessionConfigs;
}

/**
 * The same write, needing no lock taken before it: it locks the session row
 * itself and writes only if the row is still `expected` (same row, same
 * model, same head, and the same session and tenant settings when the rows
 * were built from them), not archived and not a fork (whose inherited event
 * ids no unique index covers). Undefined when it wrote nothing. With its
 * conditions in the statement, it can be committed without its answer
 * having been seen (Database.tenantOneTrip). `alongside` rows are written by
 * the same statement, not on Citus.
 */
export async function insertEventsIfUnchanged(
  tx: Tx,
  sessionId: string,
  expected: ExpectedSession,
  events: readonly EventRow[],
  alongside?: AlongsideRows,
): Promise<number | undefined> {
  const configs = expected.configs;
  if (tx.citus) {
    if (alongside || configs) throw new Error('insertEventsIfUnchanged: rows alongside the events are written on Citus by the ordinary append');
    // The creation time as a range, not date_trunc(): Citus refuses a function that is not immutable on a column in a write.
    const condition = 'head_seq = $2 AND model = $3 AND created_at >= $4 AND created_at < $5 AND archived_at IS NULL AND lineage IS NULL';
    const params = [expected.headSeq, expected.model, expected.createdAt, new Date(expected.createdAt.getTime() + 1)];
    return insertAtHeadOnCitus(tx, sessionId, events, { condition, head: 'head_seq', params }, true);
  }
  const [moved] = await tx.query(
    ...insertAtHead(
      `SELECT head_seq AS seq FROM sessions
        WHERE tenant_id = current_tenant() AND session_id = $1 AND head_seq = $10 AND model = $11 AND date_trunc('milliseconds', created_at) = $12
          AND archived_at IS NULL AND lineage IS NULL${
            configs ? ' AND config = $13::jsonb AND (SELECT t.config FROM tenants t WHERE t.tenant_id = current_tenant()) = $14::jsonb' : ''
          }
          FOR UPDATE`,
      sessionId,
      events,
      [expected.headSeq, expected.model, expected.createdAt, ...(configs ? [JSON.stringify(configs.config), JSON.stringify(configs.tenantConfig)] : [])],
      alongside,
    ),
  );
  return moved?.head_seq;
}
