import { createHash } from 'node:crypto';
import { Tx } from '@app/database';
import { assertStoredEventData, CLIENT_EVENT_TYPES, EventType, NewEvent, StoredEvent } from '@app/domain';
import type { SessionConfigs } from './sessions.store';
import { withStoredOutputJson, withStoredOutputs } from './stored-outputs.store';

const EVENT_COLUMNS = 'seq, event_id, type, data, tokens, created_at';

/** Where an event a fork inherited was first appended (its seq is the same in both logs). */
export interface EventOrigin {
  sessionId: string;
  seq: number;
}

/** A stored event as read through a session's log: `origin` only on events the session inherited. */
export type LoggedEvent = StoredEvent & { origin?: EventOrigin };

/** What a session was forked from (kept after that session is deleted). */
export interface ForkedFrom {
  sessionId: string;
  atSeq: number;
}

export const forkedFromOf = (row: Record<string, any>): ForkedFrom | null =>
  row.forked_from === null ? null : { sessionId: row.forked_from, atSeq: Number(row.forked_at_seq) };

/**
 * The FROM clause of a read of a session's log (`$1`, the session id),
 * inherited rows included, as `e` with EVENT_COLUMNS and `origin` (null on
 * the session's own events): the session row's lineage (session_segments)
 * read in the same statement, so a delete that copies a source's rows into
 * a fork is seen whole or not at all. `filter` and `order`/`limit` apply in
 * each segment's primary-key range scan; a session with no lineage has one
 * segment, its own.
 */
export function sessionLog(filter: string, order: 'ASC' | 'DESC' = 'ASC', limit = ''): string {
  return `sessions s
    CROSS JOIN LATERAL session_segments(s.lineage, s.session_id) g
    CROSS JOIN LATERAL (
      SELECT ${EVENT_COLUMNS}, nullif(g.origin, s.session_id) AS origin FROM session_events
       WHERE tenant_id = current_tenant() AND session_id = g.source AND seq > g.after_seq AND seq <= g.through_seq AND ${filter}
       ORDER BY seq ${order} ${limit}) e
   WHERE s.tenant_id = current_tenant() AND s.session_id = $1`;
}

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

/** The insert hit an event id the session already holds (a retry, or a reused id). */
export function isDuplicateEventId(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  // Citus relays a worker's error without the constraint field: its name is then in the message.
  const constraint = e?.constraint ?? /unique constraint "([^"]+)"/.exec(e?.message ?? '')?.[1] ?? '';
  // On the partitioned log (migration 1765200000000) the partition's index reports the violation; on Citus, the shard's (its id appended).
  return e?.code === '23505' && /^session_events(_p\d+)?_tenant_id_session_id_event_id_key(_\d+)?$/.test(constraint);
}

/** What tells a replayed event id with the same body from one reused with another body. */
export function payloadHash(event: Pick<NewEvent, 'type' | 'data'>): Buffer {
  return createHash('sha256').update(JSON.stringify([event.type, event.data])).digest();
}

type EventRow = { event: NewEvent; payloadHash: Buffer; tokens: number };

/**
 * The statement that writes events at head+1.. and moves the head, `head`
 * being a query of one row (`seq`) or none, which writes nothing; its
 * parameters after $8..$10 are the head query's own.
 */
function insertAtHead(head: string, sessionId: string, events: readonly EventRow[], headParams: unknown[]): [string, unknown[]] {
  const pivot = checkedPivot(events);
  return [
    `WITH head AS (${head}),
     inserted AS (
       INSERT INTO session_events (tenant_id, session_id, seq, event_id, type, data, tokens, payload_hash)
       SELECT current_tenant(), $1, head.seq + ord, id, type, data, tokens, hash
         FROM head, ROWS FROM (unnest($2::text[]), unnest($3::text[]), jsonb_array_elements($4::jsonb), unnest($5::int[]), unnest($6::bytea[]))
              WITH ORDINALITY AS t(id, type, data, tokens, hash, ord)
        WHERE head.seq IS NOT NULL
       RETURNING 1)
     UPDATE sessions SET head_seq = (SELECT seq FROM head) + $7, updated_at = statement_timestamp(),
            pivot_seq = coalesce((SELECT seq FROM head) + $8, pivot_seq), covered_through_seq = coalesce($9, covered_through_seq)
      WHERE tenant_id = current_tenant() AND session_id = $1 AND (SELECT count(*) FROM inserted) = $7
     RETURNING head_seq`,
    [
      sessionId,
      events.map((e) => e.event.id),
      events.map((e) => e.event.type),
      // One JSON document, not a jsonb[]: pg escapes every element of an array literal in JS, which cost more than the insert.
      JSON.stringify(events.map((e) => e.event.data)),
      events.map((e) => e.tokens),
      events.map((e) => e.payloadHash),
      events.length,
      pivot?.offset ?? null,
      pivot?.coveredThroughSeq ?? null,
      ...headParams,
    ],
  ];
}

/** Checks what the service writes itself; returns where a compaction.completed among the events moves the pivot. */
function checkedPivot(events: readonly EventRow[]): { offset: number; coveredThroughSeq: number } | null {
  // Client events passed the append's schemas; what the service writes itself meets the same published ones, or is not written.
  for (const [i, { event }] of events.entries()) if (!CLIENT_EVENT_TYPES.includes(event.type)) assertStoredEventData(event.type, event.data, `$[${i}].data`);
  const pivotIndex = events.map((e) => e.event.type).lastIndexOf('compaction.completed');
  return pivotIndex < 0 ? null : { offset: pivotIndex + 1, coveredThroughSeq: (events[pivotIndex].event.data as { coveredThroughSeq: number }).coveredThroughSeq };
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
      events.map((e) => e.event.id),
      events.map((e) => e.event.type),
      JSON.stringify(events.map((e) => e.event.data)),
      events.map((e) => e.tokens),
      events.map((e) => e.payloadHash),
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
 * from. Must run after lockSessionForAppend in the same transaction. With
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
}

/**
 * The same write, needing no lock taken before it: it locks the session row
 * itself and writes only if the row is still `expected` (same row, same
 * model, same head), not archived and not a fork (whose inherited event ids
 * no unique index covers). Undefined when it wrote nothing. With its
 * conditions in the statement, it can be committed without its answer
 * having been seen (Database.tenantOneTrip).
 */
export async function insertEventsIfUnchanged(tx: Tx, sessionId: string, expected: ExpectedSession, events: readonly EventRow[]): Promise<number | undefined> {
  if (tx.citus) {
    // The creation time as a range, not date_trunc(): Citus refuses a function that is not immutable on a column in a write.
    const condition = 'head_seq = $2 AND model = $3 AND created_at >= $4 AND created_at < $5 AND archived_at IS NULL AND lineage IS NULL';
    const params = [expected.headSeq, expected.model, expected.createdAt, new Date(expected.createdAt.getTime() + 1)];
    return insertAtHeadOnCitus(tx, sessionId, events, { condition, head: 'head_seq', params }, true);
  }
  const [moved] = await tx.query(
    ...insertAtHead(
      `SELECT head_seq AS seq FROM sessions
        WHERE tenant_id = current_tenant() AND session_id = $1 AND head_seq = $10 AND model = $11 AND date_trunc('milliseconds', created_at) = $12
          AND archived_at IS NULL AND lineage IS NULL
          FOR UPDATE`,
      sessionId,
      events,
      [expected.headSeq, expected.model, expected.createdAt],
    ),
  );
  return moved?.head_seq;
}

export function toStored(row: Record<string, any>): LoggedEvent {
  return {
    seq: row.seq,
    id: row.event_id,
    type: row.type as EventType,
    data: row.data,
    createdAt: row.created_at,
    tokens: row.tokens,
    ...(row.origin ? { origin: { sessionId: row.origin, seq: Number(row.seq) } } : {}),
  } as LoggedEvent;
}

/**
 * A page of `$3` events after seq `$2`, bounded on both sides: seqs are gap-free (invariant 1), so the page is
 * exactly that range. Without the upper bound the planner, expecting a handful of rows from the partitioned log,
 * sorted everything after `$2` for each page instead of reading `$3` rows in index order.
 */
const PAGE_RANGE = 'seq > $2 AND seq <= $2::bigint + $3';

/**
 * One page of the raw log after `afterSeq`, inherited events included (with
 * their origin), by the primary key; with `types`, only events of those
 * types (filtered along the range scan: the rare ones an inspector looks for
 * have no index of their own, which every append would pay for).
 */
export async function readEvents(tx: Tx, sessionId: string, afterSeq: number, limit: number, types?: readonly string[]): Promise<LoggedEvent[]> {
  const rows = types
    ? await tx.query(`SELECT e.* FROM ${sessionLog('seq > $2 AND type = ANY($4::text[])', 'ASC', 'LIMIT $3')} ORDER BY e.seq LIMIT $3`, [sessionId, afterSeq, limit, types])
    : await tx.query(`SELECT e.* FROM ${sessionLog(PAGE_RANGE, 'ASC', 'LIMIT $3')} ORDER BY e.seq LIMIT $3`, [sessionId, afterSeq, limit]);
  return withStoredOutputs(tx, rows.map(toStored));
}

/**
 * An event of a log page as the API shows it (seq, id, type, data,
 * createdAt, origin on inherited events), written as JSON text by
 * PostgreSQL: `data` goes out as stored, unless a tool output is restored
 * into it (withStoredOutputJson).
 */
export interface EventJsonRow {
  seq: number;
  type: string;
  /** The event's JSON in pieces (joined, the event): a stored output spliced in is a piece of its own. */
  json: string[];
}

/**
 * One page of the raw log after `afterSeq` with the session's head, in one
 * statement (the session row and its log in one snapshot): undefined when
 * the session does not exist. With `types`, only events of those types, as
 * readEvents.
 */
export async function readEventPage(
  tx: Tx,
  sessionId: string,
  afterSeq: number,
  limit: number,
  types?: readonly string[],
): Promise<{ headSeq: number; events: EventJsonRow[] } | undefined> {
  const filter = types ? 'seq > $2 AND type = ANY($4::text[])' : PAGE_RANGE;
  const rows = await tx.query(
    `SELECT s.head_seq, e.seq, e.type,
            '{"seq":' || e.seq || ',"id":' || to_json(e.event_id) || ',"type":' || to_json(e.type) || ',"data":' || e.data
              || ',"createdAt":"' || to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
              || coalesce(',"origin":{"sessionId":' || to_json(e.origin) || ',"seq":' || e.seq || '}', '') || '}' AS json
       FROM sessions s
       LEFT JOIN LATERAL (
         SELECT e.* FROM session_segments(s.lineage, s.session_id) g
          CROSS JOIN LATERAL (
            SELECT seq, event_id, type, data, created_at, nullif(g.origin, s.session_id) AS origin FROM session_events
             WHERE tenant_id = current_tenant() AND session_id = g.source AND seq > g.after_seq AND seq <= g.through_seq AND ${filter}
             ORDER BY seq LIMIT $3) e
          ORDER BY e.seq LIMIT $3) e ON true
      WHERE s.tenant_id = current_tenant() AND s.session_id = $1
      ORDER BY e.seq`,
    types ? [sessionId, afterSeq, limit, types] : [sessionId, afterSeq, limit],
  );
  if (rows.length === 0) return undefined;
  return { headSeq: rows[0].head_seq, events: rows[0].seq === null ? [] : await withStoredOutputJson(tx, rows.map((r) => ({ seq: r.seq, type: r.type, json: r.json }))) };
}

export interface KnownToolCallRow {
  callId: string;
  name: string;
  answered: boolean;
  /** The seqs of the messages that issued and answered the call. */
  issuedSeq: number;
  answeredSeq: number | null;
}

export async function findToolCalls(tx: Tx, sessionId: string, callIds: string[]): Promise<KnownToolCallRow[]> {
  // One index probe per id, as ownEvents does: with `call_id = ANY($2)` the planner, whenever its estimate for
  // the session was low (stale statistics, a young tenant), probed (tenant_id, session_id) only and filtered
  // every call of the session: an append with tool results cost O(the session's calls), 0.9 ms at 2,400.
  const rows = await tx.query(
    `SELECT c.call_id, c.name, c.issued_seq, c.answered_seq
       FROM unnest($2::text[]) AS wanted(id)
       CROSS JOIN LATERAL (
         SELECT call_id, name, issued_seq, answered_seq FROM session_tool_calls
          WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = wanted.id
          LIMIT 1) c`,
    [sessionId, callIds],
  );
  return rows.map((r) => ({
    callId: r.call_id,
    name: r.name,
    answered: r.answered_seq !== null,
    issuedSeq: Number(r.issued_seq),
    answeredSeq: r.answered_seq === null ? null : Number(r.answered_seq),
  }));
}

/** Records issued calls and answers; the primary key backs the duplicate-id rule. */
export async function recordToolCalls(
  tx: Tx,
  sessionId: string,
  issued: ReadonlyArray<{ callId: string; name: string; seq: number }>,
  answered: ReadonlyArray<{ callId: string; seq: number }>,
): Promise<void> {
  // A call answered in the batch that issued it (a whole turn in one append) is inserted answered: one statement, not two.
  const answeredSeq = new Map(answered.map((a) => [a.callId, a.seq]));
  const issuedIds = new Set(issued.map((c) => c.callId));
  const answeredBefore = answered.filter((a) => !issuedIds.has(a.callId));
  if (issued.length > 0) {
    await tx.query(
      `INSERT INTO session_tool_calls (tenant_id, session_id, call_id, name, issued_seq, answered_seq)
       SELECT tn.tenant_id, $1, t.call_id, t.name, t.seq, t.answered
         FROM tenants tn, unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS t(call_id, name, seq, answered)
        WHERE tn.tenant_id = current_tenant()`,
      [sessionId, issued.map((c) => c.callId), issued.map((c) => c.name), issued.map((c) => c.seq), issued.map((c) => answeredSeq.get(c.callId) ?? null)],
    );
  }
  if (answeredBefore.length > 0) {
    // Each row found by one index probe, then updated by its tuple id. Joined on the key, the planner (on the
    // same low estimate as above) scanned every call of the session: 4.2 ms for one answer at 2,400 calls.
    // The session lock, held by the caller, keeps these rows from changing between the probe and the update;
    // were one to change anyway, it would be skipped, and the count below refuses the batch.
    const updated = await tx.query(
      `UPDATE session_tool_calls c SET answered_seq = w.seq
         FROM (SELECT k.tbl, k.row, t.seq
                 FROM unnest($2::text[], $3::bigint[]) AS t(call_id, seq)
                 CROSS JOIN LATERAL (
                   SELECT tableoid AS tbl, ctid AS row FROM session_tool_calls
                    WHERE tenant_id = current_tenant() AND session_id = $1 AND call_id = t.call_id
                    LIMIT 1) k) w
        -- A tuple id names a row only within its table: the table too, should this one ever be partitioned.
        WHERE c.tenant_id = current_tenant() AND c.tableoid = w.tbl AND c.ctid = w.row
       RETURNING 1`,
      [sessionId, answeredBefore.map((a) => a.callId), answeredBefore.map((a) => a.seq)],
    );
    if (updated.length !== answeredBefore.length) throw new Error(`session ${sessionId}: ${updated.length} of ${answeredBefore.length} answered tool calls recorded`);
  }
}


export interface WindowRead {
  session: SessionWindowFacts;
  pivot: StoredEvent<'compaction.completed'> | null;
  /** Events after the pivot's covered-through seq, up to atSeq (or the head). */
  events: StoredEvent[];
}

export interface SessionWindowFacts {
  sessionId: string;
  model: string;
  system: string | null;
  systemTokens: number;
  config: Record<string, unknown>;
  tenantConfig: Record<string, unknown>;
  metadata: Record<string, unknown>;
  headSeq: number;
  pivotSeq: number;
  coveredThroughSeq: number;
  /** The marker a worker is compacting (its lease not yet lapsed), or null. */
  runningMarkerSeq: number | null;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
  forkedFrom: ForkedFrom | null;
}

/** The pivot in force at `upTo`: the session's latest compaction.completed at or before it (partial pivot index), inherited ones included. */
export async function pivotAt(tx: Tx, sessionId: string, upTo: number): Promise<StoredEvent<'compaction.completed'> | null> {
  const [found] = await tx.query(
    `SELECT e.* FROM ${sessionLog("type = 'compaction.completed' AND seq <= $2", 'DESC', 'LIMIT 1')} ORDER BY e.seq DESC LIMIT 1`,
    [sessionId, upTo],
  );
  return found ? (toStored(found) as StoredEvent<'compaction.completed'>) : null;
}

/**
 * The window a context read folds: the session row (which remembers the
 * pivot), then one primary-key range scan per segment of its log (one for a
 * session that is no fork). With `atSeq` below the head, the
 * pivot in force at that seq comes from the partial pivot index.
 */
export async function readWindow(tx: Tx, sessionId: string, atSeq?: number): Promise<WindowRead | undefined> {
  const [row] = await tx.query(
    `SELECT s.session_id, s.model, s.system, s.system_tokens, s.config, s.metadata, s.head_seq, s.pivot_seq,
            s.covered_through_seq, s.created_at, s.updated_at, s.archived_at, s.forked_from, s.forked_at_seq, t.config AS tenant_config,
            CASE WHEN s.compaction_running_until > now() THEN s.compaction_running_marker_seq END AS running_marker_seq
       FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id WHERE s.tenant_id = current_tenant() AND s.session_id = $1`,
    [sessionId],
  );
  if (!row) return undefined;
  const session: SessionWindowFacts = {
    sessionId: row.session_id,
    model: row.model,
    system: row.system,
    systemTokens: row.system_tokens,
    config: row.config,
    tenantConfig: row.tenant_config,
    metadata: row.metadata,
    headSeq: row.head_seq,
    pivotSeq: row.pivot_seq,
    coveredThroughSeq: row.covered_through_seq,
    runningMarkerSeq: row.running_marker_seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    archivedAt: row.archived_at,
    forkedFrom: forkedFromOf(row),
  };
  const upTo = atSeq === undefined ? session.headSeq : Math.min(atSeq, session.headSeq);
  let pivot: StoredEvent<'compaction.completed'> | null = null;
  let after = session.coveredThroughSeq;
  if (upTo < session.pivotSeq) {
    pivot = await pivotAt(tx, sessionId, upTo);
    after = pivot?.data.coveredThroughSeq ?? 0;
  }
  const rows = await tx.query(`SELECT e.* FROM ${sessionLog('seq > $2 AND seq <= $3')} ORDER BY e.seq`, [sessionId, after, upTo]);
  const events = await withStoredOutputs(tx, rows.map(toStored));
  if (upTo >= session.pivotSeq && session.pivotSeq > 0) {
    pivot = (events.find((e) => e.seq === session.pivotSeq) as StoredEvent<'compaction.completed'> | undefined) ?? null;
  }
  return { session, pivot, events };
}

/**
 * A rewind to `toSeq`, under the session lock (the caller's append): calls
 * issued up to toSeq whose answer the rewind takes out of the view are
 * unanswered again, so the agent can run them and append a new result. Calls
 * issued after toSeq stay in the ledger: their ids remain used (a new call
 * takes a new id, as providers mint them), and a late result for one is
 * accepted and dropped by the view with its call. A fork taken before the
 * rewind copies the ledger as it is then; a call whose result the fork shows
 * but the rewind unanswered may be answered twice there, which the view
 * repairs (the later result dropped).
 */
export async function unanswerToolCallsAfter(tx: Tx, sessionId: string, toSeq: number): Promise<number> {
  const rows = await tx.query(
    `UPDATE session_tool_calls SET answered_seq = NULL
      WHERE tenant_id = current_tenant() AND session_id = $1 AND issued_seq <= $2 AND answered_seq > $2
     RETURNING 1`,
    [sessionId, toSeq],
  );
  return rows.length;
}

/** The `toSeq` of every rewind appended after `afterSeq`, in seq order. */
export async function rewindsAfter(tx: Tx, sessionId: string, afterSeq: number): Promise<number[]> {
  const rows = await tx.query(`SELECT e.data FROM ${sessionLog("type = 'session.rewound' AND seq > $2")} ORDER BY e.seq`, [sessionId, afterSeq]);
  return rows.map((row) => Number(row.data.toSeq));
}
