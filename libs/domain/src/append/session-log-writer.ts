import type { OutputChunk } from '../tool-output/chunking';
import { AppendState, EventRow } from './decide-append';

/** What the lock read looks up for a batch besides the session row. */
export interface AppendLookup {
  eventIds: readonly string[];
  /** Among the whole log, or only what a fork inherited (the unique index guards a session's own rows). */
  lookup: 'log' | 'inherited';
  /** The call ids the batch mentions (referencedCallIds): their ledger entries. */
  callIds: readonly string[];
  /** Whether to read the session's and tenant's settings with the lock (the tool-output step needs them). */
  withConfigs: boolean;
}

/** A decided write: the rows at firstSeq.. and the ledger's rows. */
export interface DecidedWrite {
  firstSeq: number;
  rows: readonly EventRow[];
  ledger: { issued: ReadonlyArray<{ callId: string; name: string; seq: number }>; answered: ReadonlyArray<{ callId: string; seq: number }> };
}

/**
 * What a write in one round trip writes besides its rows, under the same
 * conditions: the tool calls the batch issues (those it answers too with
 * their answer's seq), the answers to calls issued before it (which must
 * still be open, or nothing is written), and the refs of the outputs its
 * events keep whole.
 */
export interface AlongsideRows {
  calls: ReadonlyArray<{ callId: string; name: string; seq: number; answeredSeq: number | null }>;
  answers: ReadonlyArray<{ callId: string; seq: number }>;
  inlineRefs: ReadonlyArray<{ refId: string; attachedSeq: number }>;
  /** Outputs for the tool-output tables: a ref each, the content and its chunks written once per sha256. */
  storedOutputs: ReadonlyArray<StoredOutputRows>;
}

/** An output the tool-output tables keep: its ref, its content's totals and its chunks. */
export interface StoredOutputRows {
  refId: string;
  attachedSeq: number;
  sha256: Uint8Array;
  byteSize: number;
  lineCount: number;
  chunkCount: number;
  chunks: readonly OutputChunk[];
}

/**
 * The store port every writer of events appends through, `T` being its
 * transaction and `C` the settings it reads with the lock: lock and read
 * the decider's state, then write what it decided, in that transaction.
 */
export interface SessionLogWriter<T, C> {
  /** Locks the session row and reads the state decideAppend needs; undefined when there is no such session. */
  lock(tx: T, sessionId: string, lookup: AppendLookup): Promise<{ state: AppendState; configs?: C } | undefined>;
  /**
   * Writes rows at the head the statement reads itself, sent behind the lock
   * before its answer (a speculative insert): the decision that follows
   * still decides, and a refusal rolls it back. Returns the new head.
   */
  writeAhead(tx: T, sessionId: string, rows: readonly EventRow[]): Promise<number>;
  /**
   * Writes a decision's rows and ledger rows, together with `alongside`
   * (another adapter's writes already sent, e.g. tool outputs), the first
   * refusal rejecting; `written` when writeAhead sent the rows. Returns the new head.
   */
  write(tx: T, sessionId: string, write: DecidedWrite, options?: { written?: Promise<number>; alongside?: ReadonlyArray<Promise<unknown>> }): Promise<number>;
  /**
   * Writes an import's decision: its rows at their own seqs (firstSeq..)
   * with the times they were first written (`createdAt`, one per row), its
   * ledger rows, and moves the head. Returns the new head.
   */
  writeImported(tx: T, sessionId: string, write: DecidedWrite, createdAt: readonly string[]): Promise<number>;
  /**
   * Writes rows decided on a state assumed before any lock, with no lock
   * taken before it: it locks the session row itself and writes only if the
   * row is still `expected` (same row, model and head, and the settings
   * `configs` when the rows were built from them), not archived and no
   * fork, with `alongside`. Undefined when it wrote nothing. Its conditions
   * being in the statement, its transaction may be committed unseen (one
   * round trip).
   */
  writeIfUnchanged(
    tx: T,
    sessionId: string,
    expected: { headSeq: number; model: string; createdAt: Date; configs?: C },
    rows: readonly EventRow[],
    alongside?: AlongsideRows,
  ): Promise<number | undefined>;
}

/** The lock read of a writer whose events take their ids from the head (so none is stored yet) and mention no tool call. */
export const NO_LOOKUP: AppendLookup = { eventIds: [], lookup: 'log', callIds: [], withConfigs: false };
