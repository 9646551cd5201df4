import { Database } from '@app/database';
import { searchDocuments, tokenize, tsvectorLiteral } from '@app/domain';
import { readEventPage, SearchDocumentRow, searchProgress, storeSearchDocuments } from '@app/event-store';

/** Events read and indexed per transaction. */
const PAGE = 500;

/**
 * The search documents of events as the log page returns them (JSON with
 * tool outputs restored); only those whose text `keep` accepts, when given
 * (a search's cheap pre-filter, before the terms are made).
 */
export function documentRowsOf(events: ReadonlyArray<{ json: string[] }>, keep?: (text: string) => boolean): SearchDocumentRow[] {
  return events.flatMap(({ json }) => {
    const event = JSON.parse(json.join('')) as { seq: number; type: string; data: unknown; createdAt: string };
    const docs = searchDocuments(event.type, event.data);
    return (keep ? docs.filter((doc) => keep(doc.text)) : docs).map((doc) => ({
      seq: event.seq,
      part: doc.part,
      role: doc.role,
      eventType: event.type,
      partType: doc.partType,
      toolName: doc.toolName,
      createdAt: event.createdAt,
      body: doc.text,
      terms: tsvectorLiteral(tokenize(doc.text)),
    }));
  });
}

/**
 * Indexes the session's events after its search progress, a page per
 * transaction, up to its head or `maxEvents` (a later run goes on). A
 * fork's timeline is indexed as it reads, inherited events included, so a
 * search inside the fork finds them and they stay when the source goes.
 * Returns the seq indexed through, or null for a session that no longer exists.
 */
export async function indexSessionForSearch(db: Database, tenantId: string, sessionId: string, maxEvents = 20_000): Promise<number | null> {
  // One transaction per page, the progress read inside it: a run that finds a few new events (the common case) is one transaction.
  for (let read = 0; ; ) {
    const done = await db.tenantTx(tenantId, async (tx) => {
      const progress = await searchProgress(tx, sessionId);
      if (!progress) return null;
      if (progress.indexedSeq >= progress.headSeq) return { through: progress.indexedSeq, count: 0, more: false };
      const page = await readEventPage(tx, sessionId, progress.indexedSeq, PAGE);
      if (!page) return null;
      const last = page.events.length > 0 ? page.events[page.events.length - 1].seq : page.headSeq;
      await storeSearchDocuments(tx, sessionId, documentRowsOf(page.events), last);
      return { through: last, count: page.events.length, more: page.events.length > 0 && last < page.headSeq };
    });
    if (!done) return null;
    read += done.count;
    if (!done.more || read >= maxEvents) return done.through;
  }
}
