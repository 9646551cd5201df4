import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, sqlState } from '@app/database';
import { holdsEveryTerm, invalid, parseSearchQuery, snippetOf } from '@app/domain';
import { LogSearchCursor, LogSearchFilter, readEventPage, SearchDocumentRow, searchLog, searchProgress } from '@app/event-store';
import { documentRowsOf } from '@app/use-cases';
import { decodeCursor, encodeCursor, invalidCursor } from '../http/cursor';
import { sessionNotFound } from '../sessions/session-state';
import { SearchQuery, SessionSearchQuery } from './search.dto';

/** A search cursor: the last hit's sort keys. */
const cursorKeys = (c: LogSearchCursor) => [c.rank, c.createdAt, c.sessionId, c.seq, c.part];
const readSearchCursor = ([rank, createdAt, sessionId, seq, part]: unknown[]): LogSearchCursor | undefined =>
  typeof rank === 'string' && typeof createdAt === 'string' && typeof sessionId === 'string' && Number.isSafeInteger(seq) && Number.isSafeInteger(part)
    ? { rank, createdAt, sessionId, seq: seq as number, part: part as number }
    : undefined;

/**
 * Full-text search over the tenant's log (GET /v1/search) or one session's
 * (GET /v1/sessions/{id}/search): the index the worker keeps
 * (search-indexing.ts), ranked in PostgreSQL, snippets cut here. Inside one
 * session, the events the index does not hold yet (at most
 * SEARCH_UNINDEXED_EVENTS after its indexed seq) are read from the log,
 * made into documents by the indexer's own code, kept when they hold every
 * term of the query, and ranked with the indexed matches by the same SQL:
 * a search right after an append finds it.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async search(tenantId: string, { q, limit = 20, cursor, ...filters }: SearchQuery | SessionSearchQuery, sessionId?: string) {
    const query = parseSearchQuery(q);
    const after = cursor === undefined ? undefined : decodeCursor(cursor, readSearchCursor);
    const filter: LogSearchFilter = { ...filters, roles: filters.role, sessionId };
    const found = await this.db
      .tenantRead(tenantId, async (tx) => {
        const progress = sessionId === undefined ? undefined : await searchProgress(tx, sessionId);
        if (sessionId !== undefined && !progress) throw sessionNotFound(sessionId);
        let unindexed: SearchDocumentRow[] = [];
        let searchedSeq = progress?.indexedSeq;
        if (progress && progress.headSeq > progress.indexedSeq && this.config.search.unindexedEvents > 0) {
          // Index and log split at the indexed seq read here, so a run of the indexer committing meanwhile neither hides nor repeats a hit.
          filter.throughSeq = progress.indexedSeq;
          const page = await readEventPage(tx, sessionId!, progress.indexedSeq, this.config.search.unindexedEvents);
          if (page && page.events.length > 0) {
            searchedSeq = page.events[page.events.length - 1].seq;
            unindexed = documentRowsOf(page.events, (text) => holdsEveryTerm(text, query));
          }
        }
        return { progress, searchedSeq, ...(await searchLog(tx, query.tsquery, filter, limit + 1, this.config.search.maxMatches, after, unindexed)) };
      })
      .catch((error: unknown) => {
        // A forged cursor, or a filter, can carry values PostgreSQL refuses (a bad timestamp, a NUL): SQLSTATE class 22.
        if (sqlState(error)?.startsWith('22')) throw after ? invalidCursor() : invalid('invalid_search', 'A filter holds a value the database refuses');
        throw error;
      });
    const page = found.hits.slice(0, limit);
    return {
      hits: page.map((hit) => ({
        sessionId: hit.sessionId,
        title: hit.title,
        seq: hit.seq,
        part: hit.part,
        eventType: hit.eventType,
        role: hit.role,
        partType: hit.partType,
        toolName: hit.toolName,
        createdAt: new Date(hit.createdAt).toISOString(),
        score: Number(hit.rank),
        snippet: snippetOf(hit.body, query),
      })),
      nextCursor: found.hits.length > limit ? encodeCursor(cursorKeys(page[page.length - 1])) : null,
      capped: found.matched > this.config.search.maxMatches,
      ...(found.progress ? { headSeq: found.progress.headSeq, indexedThroughSeq: found.progress.indexedSeq, searchedThroughSeq: found.searchedSeq } : {}),
    };
  }
}
