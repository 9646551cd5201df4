import { Tx } from '@app/database';
import { EventType, StoredEvent } from '@app/domain';
import { InlineOutput, inlineOutputIn } from '@app/domain/tool-output';
import { ForkedFrom, forkedFromOf } from './session-row';
import { withStoredOutputJson, withStoredOutputs } from './stored-outputs.store';

// Reads of a session's log (inherited segments included): pages, the context window, the pivot at a seq.

const EVENT_COLUMNS = 'seq, event_id, type, data, tokens, created_at';

/** Where an event a fork inherited was first appended (its seq is the same in both logs). */
export interface EventOrigin {
  sessionId: string;
  seq: number;
}

/** A stored event as read through a session's log: `origin` only on events the session inherited. */
export type LoggedEvent = StoredEvent & { origin?: EventOrigin };

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
 * The output an inline ref names: the result citing `refId` in the event at
 * `seq` of the session's log (inherited events included); undefined when
 * that event holds no such output.
 */
export async function readInlineOutput(tx: Tx, sessionId: string, seq: number, refId: string): Promise<InlineOutput | undefined> {
  const [row] = await tx.query(`SELECT e.data FROM ${sessionLog('seq = $2')}`, [sessionId, seq]);
  return row ? inlineOutputIn(row.data, refId) : undefined;
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

export interface WindowRead {
  session: SessionWindowFacts;
  pivot: StoredEvent<'compaction.completed'> | null;
  /** Events after the pivot's covered-through seq, up to atSeq (or the head), but the clients' records (never in the view). */
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
  // A client's records (a framework's checkpoints) are never part of the view: skipped here, so they cost a read nothing however large.
  const rows = await tx.query(`SELECT e.* FROM ${sessionLog("seq > $2 AND seq <= $3 AND type <> 'record.added'")} ORDER BY e.seq`, [sessionId, after, upTo]);
  const events = await withStoredOutputs(tx, rows.map(toStored));
  if (upTo >= session.pivotSeq && session.pivotSeq > 0) {
    pivot = (events.find((e) => e.seq === session.pivotSeq) as StoredEvent<'compaction.completed'> | undefined) ?? null;
  }
  return { session, pivot, events };
}

/** The `toSeq` of every rewind appended after `afterSeq`, in seq order. */
export async function rewindsAfter(tx: Tx, sessionId: string, afterSeq: number): Promise<number[]> {
  const rows = await tx.query(`SELECT e.data FROM ${sessionLog("type = 'session.rewound' AND seq > $2")} ORDER BY e.seq`, [sessionId, afterSeq]);
  return rows.map((row) => Number(row.data.toSeq));
}
