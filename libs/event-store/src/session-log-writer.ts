import { Tx } from '@app/database';
import { SessionLogWriter } from '@app/domain';
import { insertEvents, insertEventsIfUnchanged, lockSessionForAppend } from './append.store';
import type { SessionConfigs } from './session-row';
import { insertImportedEvents } from './transfer.store';
import { findToolCalls, recordToolCalls } from './tool-call-ledger.store';

/** The append port on PostgreSQL: the lock with its lookups, the insert at the head (or an import's at its seqs) and the ledger's rows. */
export const logWriter: SessionLogWriter<Tx, SessionConfigs> = {
  async lock(tx, sessionId, { eventIds, lookup, callIds, withConfigs }) {
    // Both go out together; the ledger's rows are only read under the lock, which the first statement takes.
    const [locked, knownCalls] = await Promise.all([
      // No ids, no lookup statement.
      lockSessionForAppend(tx, sessionId, { eventIds: eventIds.length > 0 ? [...eventIds] : undefined, lookup, withConfigs }),
      callIds.length > 0 ? findToolCalls(tx, sessionId, [...callIds]) : [],
    ]);
    if (!locked) return undefined;
    const { headSeq, model, archived, existing, configs } = locked;
    return { state: { sessionId, headSeq, model, archived, stored: existing, knownCalls }, configs };
  },

  writeAhead: (tx, sessionId, rows) => insertEvents(tx, sessionId, null, rows),

  async write(tx, sessionId, { firstSeq, rows, ledger }, { written, alongside = [] } = {}) {
    // The events, the tool calls and the other writes go out in one burst (pipelined, in this order).
    const [headSeq] = await Promise.all([
      written ?? insertEvents(tx, sessionId, firstSeq - 1, rows),
      recordToolCalls(tx, sessionId, ledger),
      ...alongside,
    ]);
    return headSeq;
  },

  async writeImported(tx, sessionId, { firstSeq, rows, ledger }, createdAt) {
    const [headSeq] = await Promise.all([insertImportedEvents(tx, sessionId, firstSeq, rows, createdAt), recordToolCalls(tx, sessionId, ledger)]);
    return headSeq;
  },

  writeIfUnchanged: insertEventsIfUnchanged,
};
