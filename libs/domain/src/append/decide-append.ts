import { classifyAppendRetry, versionConflict } from '../append-retry';
import { assertUniqueEventIds } from '../append-validation';
import { samePayload } from '../canonical-hash';
import { COMPACTION_TRIGGER_TYPES } from '../compaction';
import { DomainError, invalid } from '../errors';
import { NewEvent } from '../events';
import { eventTokens } from '../session-view';
import { applyToolCallLedger, hasToolResults, KnownToolCall } from '../tool-call-ledger';
import { storedEventOf } from '../tool-output';

/** A row of the log as it is written: the event, the hash of its payload as sent, its token estimate. */
export interface EventRow {
  event: NewEvent;
  payloadHash: Buffer;
  tokens: number;
}

/** What the session lock read for a batch: everything the decision depends on before anything is written. */
export interface AppendState {
  sessionId: string;
  headSeq: number;
  model: string;
  archived: boolean;
  /** The batch's event ids the session already holds, with their seqs and stored payload hashes. */
  stored: ReadonlyArray<{ id: string; seq: number; payloadHash: Buffer }>;
  /** The ledger's entries for the call ids the batch mentions. */
  knownCalls: readonly KnownToolCall[];
}

/**
 * Who writes: `request`, a client's batch or one the service writes on a
 * request (a pin, a config change, a marker); `upkeep`, the result of the
 * service's own work on the log (a compaction's, a prune's or archive's),
 * which is written to an archived session too: archiving stops the
 * session's clients, not the upkeep of what it already holds; `import`, an
 * exported log's events written into the session the import created: they
 * keep their seqs, their ids are new to the session (a stored one is no
 * replay), their tool outputs are stored or inline already, and they
 * trigger nothing (the log arrives with its own markers and pivots).
 */
export type AppendMode = 'request' | 'upkeep' | 'import';

/** A batch and what comes with it. */
export interface AppendCommand {
  /** `request` unless given. */
  mode?: AppendMode;
  events: readonly NewEvent[];
  /** Each event's payload hash, as sent (payloadHash). */
  hashes: readonly Buffer[];
  expectedSeq?: number;
  /** Mode `import`: the seqs the events carry, each event's. */
  seqs?: readonly number[];
  /** The use case's own rule (a pin's budget, a rewind's bounds), on what it read under the lock; throws a DomainError to refuse. */
  check?: () => void;
  /** Whether the tenant has a storage quota. */
  quotas: boolean;
  /** Rows built before the lock answered (a speculative insert's), for a model: used when it is the session's, not built again. */
  prebuilt?: { model: string; rows: readonly EventRow[] };
}

/** What runs after the rows are written, in the same transaction, in this order. */
export interface AfterWrite {
  /**
   * The batch holds a trigger type: the compaction trigger evaluates the
   * view (it may open a marker, enqueues the job of a marker the batch
   * holds, and schedules prune after a step).
   */
  compactionTrigger: boolean;
  /**
   * The batch ends a step: prune and archive are scheduled with it when the
   * session's settings want them, judged by the trigger on the view it read
   * (a step is a trigger type).
   */
  pruneScheduling: boolean;
  /** Stored bytes against the tenant's quotas: needs the batch written, so it runs last and a refusal rolls all of it back. */
  quotaCheck: boolean;
}

export interface AppendResponse {
  status: 200 | 201;
  body: { headSeq: number; events: Array<{ id: string; seq: number }> };
}

export type AppendDecision =
  | { kind: 'replay'; response: AppendResponse }
  | {
      kind: 'write';
      firstSeq: number;
      /** The tool-call ledger's rows: calls issued and answered, at their events' seqs. */
      ledger: { issued: Array<{ callId: string; name: string; seq: number }>; answered: Array<{ callId: string; seq: number }> };
      /**
       * The rows at firstSeq..; null when the batch carries tool results: the
       * tool-output step (an adapter's, it writes) turns them into views
       * first, and appendRows builds the rows from those.
       */
      rows: EventRow[] | null;
      afterWrite: AfterWrite;
      response: AppendResponse;
    };

/** Appends to an archived session are refused until it is unarchived (PATCH {archived: false}). */
export const sessionArchived = (sessionId: string) =>
  new DomainError('conflict', 'session_archived', `Session ${JSON.stringify(sessionId.slice(0, 200))} is archived; unarchive it (PATCH {"archived": false}) to append`);

/**
 * The append's rules, in the order they apply; the first that refuses
 * decides, and nothing is written before all have passed:
 *
 * 1. replay: every event id already stored with the same body answers the
 *    original seqs, writing nothing (an id with another body 422, a mix 409);
 *    an import's ids are new instead: one the session or the batch holds
 *    already is 400 duplicate_event_id;
 * 2. archived: an archived session takes no events (409), but upkeep's;
 * 3. expectedSeq: must be the head (409 version_conflict); an import's
 *    seqs must follow the head, gap-free (400 event_out_of_order);
 * 4. the use case's own check;
 * 5. tool-call ledger: a call issued once, a result answers an issued call once;
 * 6. rows at head+1.. with their payload hashes and token estimates (after
 *    the tool-output step when the batch has tool results); an imported
 *    event's data must be what the service writes for its type, which the
 *    estimate reads (400 invalid_log);
 * 7. after the write: the compaction trigger (a marker and its job), prune
 *    scheduling after a step (neither for an import), then the quota check.
 */
export function decideAppend(state: AppendState, command: AppendCommand): AppendDecision {
  const { events, hashes } = command;
  const mode = command.mode ?? 'request';
  const ids = events.map((event) => event.id);
  if (mode === 'import') assertNewIds(ids, state.stored);
  else {
    const indexById = new Map(ids.map((id, i) => [id, i]));
    const retry = classifyAppendRetry(
      ids,
      state.stored.map((e) => {
        const i = indexById.get(e.id)!;
        return { id: e.id, seq: e.seq, sameBody: samePayload(e.payloadHash, events[i], hashes[i]) };
      }),
    );
    if (retry.kind === 'replay') return { kind: 'replay', response: { status: 200, body: { headSeq: state.headSeq, events: retry.events } } };
  }
  if (state.archived && mode !== 'upkeep') throw sessionArchived(state.sessionId);
  if (mode === 'import') assertSeqsFollow(command.seqs ?? [], events.length, state.headSeq);
  else if (command.expectedSeq !== undefined && command.expectedSeq !== state.headSeq) throw versionConflict(command.expectedSeq, state.headSeq);
  command.check?.();
  // Fills a result's missing tool name from its call, in the batch's own events (their hashes are taken already).
  const ledger = applyToolCallLedger(events, state.knownCalls);
  const firstSeq = state.headSeq + 1;
  const seqOf = (index: number) => firstSeq + index;
  const rows =
    mode === 'import'
      ? events.map((event, i) => importedRow(event, hashes[i], state.model, i))
      : hasToolResults(events)
        ? null
        : command.prebuilt?.model === state.model
          ? [...command.prebuilt.rows]
          : appendRows(events, events, hashes, state.model);
  const triggers = mode !== 'import';
  return {
    kind: 'write',
    firstSeq,
    ledger: {
      issued: ledger.issued.map((c) => ({ callId: c.callId, name: c.name, seq: seqOf(c.eventIndex) })),
      answered: ledger.answered.map((a) => ({ callId: a.callId, seq: seqOf(a.eventIndex) })),
    },
    rows,
    afterWrite: {
      compactionTrigger: triggers && events.some((event) => COMPACTION_TRIGGER_TYPES.has(event.type)),
      pruneScheduling: triggers && events.some((event) => event.type === 'step.finished'),
      quotaCheck: command.quotas,
    },
    response: { status: 201, body: { headSeq: seqOf(events.length - 1), events: ids.map((id, i) => ({ id, seq: seqOf(i) })) } },
  };
}

/**
 * decideAppend for a writer whose batch is never a replay and whose rows
 * the decider builds: upkeep's events (new ids, no tool results) and an
 * import's. Anything else is the caller's bug.
 */
export function decideWrite(state: AppendState, command: AppendCommand): Extract<AppendDecision, { kind: 'write' }> & { rows: EventRow[] } {
  const decision = decideAppend(state, command);
  if (decision.kind !== 'write' || !decision.rows) throw new Error(`session ${state.sessionId}: a ${command.mode ?? 'request'} batch must be new and its rows built by the decider`);
  return { ...decision, rows: decision.rows };
}

/** Rule 1 for an import: each id is new to the session and to the batch. */
function assertNewIds(ids: readonly string[], stored: AppendState['stored']): void {
  assertUniqueEventIds(ids);
  const [taken] = stored;
  if (taken === undefined) return;
  const i = ids.indexOf(taken.id);
  throw invalid('duplicate_event_id', `$.events[${i}].id is the id of seq ${taken.seq} (event ids are unique per session)`, { path: `$.events[${i}].id` });
}

/** Rule 3 for an import: its events carry the seqs head+1.., one each. */
function assertSeqsFollow(seqs: readonly number[], count: number, headSeq: number): void {
  for (let i = 0; i < count; i++) {
    if (seqs[i] !== headSeq + 1 + i) throw invalid('event_out_of_order', `$.events[${i}].seq is ${seqs[i]}; the log's next seq is ${headSeq + 1 + i}`, { path: `$.events[${i}].seq` });
  }
}

/**
 * Rule 6 for an import: the event's row as exported (its tool outputs
 * stored or inline already). The estimate reads what the service writes
 * for the type, so a failure there is a malformed event: 400, not 500.
 */
function importedRow(event: NewEvent, payloadHash: Buffer, model: string, index: number): EventRow {
  try {
    return { event, payloadHash, tokens: eventTokens(event, model) };
  } catch (error) {
    const reason = error instanceof DomainError ? error : invalid('invalid_log', `the event's data is not what the service writes for its type (${(error as Error).message})`);
    throw new DomainError(reason.kind, reason.code, reason.message, { ...reason.details, path: `$.events[${index}].data` });
  }
}

/**
 * The rows of a batch: `written` (the events as the tool-output step left
 * them, or as sent) with the hashes of `sent`, and tokens of what the model
 * sees; each row keeps a tool output's view only where the tool-output
 * store does not hold it (storedEventOf).
 */
export function appendRows(written: readonly NewEvent[], sent: readonly NewEvent[], hashes: readonly Buffer[], model: string): EventRow[] {
  return written.map((event, i) => ({
    event: storedEventOf(event, sent[i]),
    payloadHash: hashes[i],
    tokens: eventTokens(event, model),
  }));
}
