import { randomUUID } from 'node:crypto';
import { foldSessionSummary, type SessionKey, type SessionStore, type SessionStoreEntry, type SessionSummaryEntry } from '@anthropic-ai/claude-agent-sdk';
import { isProblem, problemError, type components, type SessionStoreClient } from '@session-store/client';
import { entryOf, eventOf, keyOf, messageOf, metadataOf, METADATA_KEY, sessionIdOf } from './entries';

type Problem = components['schemas']['Problem'];
type ListedSession = components['schemas']['Session'];

export interface ServiceSessionStoreOptions {
  /** The service, with the tenant's API key. */
  client: SessionStoreClient;
  /**
   * The model of the sessions this store creates: its context window decides
   * when the service compacts the conversation it keeps beside the
   * transcript. Default `claude-sonnet-4-5`.
   */
  model?: string;
  /**
   * Also append the transcript's user and assistant messages to the
   * session's conversation (a native append in the `anthropic` format), so
   * the service's context, compaction, search and inspector see them.
   * Default true.
   */
  messages?: boolean;
  /**
   * Called when messages could not be added to the conversation (a
   * ProblemError for one the service refuses: a block the `anthropic`
   * format cannot hold, a NUL in a tool output; else the network's error).
   * The transcript is stored all the same. Default: a process warning.
   */
  onMessagesError?: (error: unknown, key: SessionKey) => void;
}

/** Records per request: the service takes up to 1000 events and 8 MiB per append. */
const MAX_EVENTS = 500;
const MAX_BYTES = 4 * 1024 * 1024;
const PAGE = 1000;
/** Sessions read at once by listSessionSummaries. */
const CONCURRENT_READS = 8;

/**
 * A Claude Agent SDK `SessionStore` over the session store service. Each
 * transcript (a session's main one, and each subagent's under its
 * `subpath`) is a service session whose log holds its entries as
 * `record.added` events, in append order; `load` reads them back. The
 * transcript's messages go to the same session's conversation too (see
 * `messages`), which `load` never reads.
 */
export class ServiceSessionStore implements SessionStore {
  private readonly client: SessionStoreClient;
  private readonly model: string;
  private readonly messages: boolean;
  private readonly onMessagesError: (error: unknown, key: SessionKey) => void;

  constructor(options: ServiceSessionStoreOptions) {
    this.client = options.client;
    this.model = options.model ?? 'claude-sonnet-4-5';
    this.messages = options.messages ?? true;
    this.onMessagesError = options.onMessagesError ?? ((error) => process.emitWarning(`messages not added to the session's conversation: ${String(error)}`, 'SessionStoreWarning'));
  }

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const batch = withoutRepeatedUuids(entries);
    // An empty batch still makes the key exist: load() then answers [], not null.
    if (batch.length === 0) return this.createSession(key);
    for (const chunk of chunksOf(batch)) {
      const stored = await this.appendEntries(key, chunk);
      // Chunk by chunk: should a later chunk fail, the SDK's retry finds these stored and would not add their messages.
      if (this.messages) await this.appendMessages(key, stored);
    }
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    return this.readEntries(sessionIdOf(key));
  }

  async listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>> {
    const listed = await this.listed({ projectKey, subpath: null });
    return listed.flatMap(({ key, session }) => (key ? [{ sessionId: key.sessionId, mtime: mtimeOf(session) }] : []));
  }

  /**
   * Each main transcript's summary, folded from its entries with the SDK's
   * own `foldSessionSummary` (a left fold, so folding the whole transcript
   * equals folding each append's batch in turn). `mtime` is the session's
   * last write, the clock of listSessions. It reads every transcript of the
   * project: the service has nowhere to keep a per-session sidecar that a
   * listing returns (see README).
   */
  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    const listed = await this.listed({ projectKey, subpath: null });
    const summaries: SessionSummaryEntry[] = [];
    for (let i = 0; i < listed.length; i += CONCURRENT_READS) {
      const read = await Promise.all(
        listed.slice(i, i + CONCURRENT_READS).map(async ({ key, session }) => {
          const entries = key && (await this.readEntries(session.id));
          return key && entries ? [foldSessionSummary(undefined, key, entries, { mtime: mtimeOf(session) })] : [];
        }),
      );
      summaries.push(...read.flat());
    }
    return summaries;
  }

  /** Deleting a main transcript deletes its subagents' too, as InMemorySessionStore does; the main one last, so a retry finds what is left. */
  async delete(key: SessionKey): Promise<void> {
    if (key.subpath !== undefined) return this.deleteSession(sessionIdOf(key));
    const listed = await this.listed({ projectKey: key.projectKey, sessionId: key.sessionId });
    for (const { session } of listed) if (session.id !== sessionIdOf(key)) await this.deleteSession(session.id);
    await this.deleteSession(sessionIdOf(key));
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    const listed = await this.listed({ projectKey: key.projectKey, sessionId: key.sessionId });
    return listed.flatMap(({ key: listedKey }) => (listedKey?.subpath === undefined ? [] : [listedKey.subpath]));
  }

  /**
   * Appends entries as records, creating the session on first use; returns
   * those this call stored. Entries already stored (by their uuid) are left
   * out: the service answers a batch it holds in part with the ids it has.
   */
  private async appendEntries(key: SessionKey, batch: SessionStoreEntry[]): Promise<SessionStoreEntry[]> {
    const sessionId = sessionIdOf(key);
    let pending = batch.map((entry) => ({ entry, event: eventOf(entry) }));
    // Each turn appends, creates the session, or drops stored entries (one at a time when reused with another body).
    for (let attempt = 0; attempt < batch.length + 2 && pending.length > 0; attempt++) {
      const { error, response } = await this.client.api.POST('/v1/sessions/{sessionId}/events', {
        params: { path: { sessionId } },
        body: { events: pending.map(({ event }) => event) },
        headers: { 'idempotency-key': randomUUID() },
      });
      if (response.ok) return response.status === 201 ? pending.map(({ entry }) => entry) : [];
      if (error?.code === 'session_not_found') {
        await this.createSession(key);
        continue;
      }
      const stored = storedIdsOf(error);
      if (stored.size === 0) throw problemError(response, error);
      pending = pending.filter(({ event }) => event.id === undefined || !stored.has(event.id));
    }
    if (pending.length > 0) throw new Error(`append to ${sessionId} did not settle`);
    return [];
  }

  /**
   * The conversation beside the transcript. The entries are stored by now,
   * so a failure here loses nothing the SDK reads back; throwing would only
   * make the SDK retry a batch whose entries are all stored, and nothing
   * would be appended. A batch the service refuses (it refuses it whole) is
   * tried message by message, so that one message the format cannot hold
   * keeps no other out.
   */
  private async appendMessages(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const messages = entries.flatMap((entry) => messageOf(entry) ?? []);
    if (messages.length === 0) return;
    const error = await this.appendNative(sessionIdOf(key), messages);
    if (error === undefined) return;
    if (messages.length === 1 || !isRefusal(error)) return this.onMessagesError(error, key);
    for (const message of messages) {
      const refused = await this.appendNative(sessionIdOf(key), [message]);
      if (refused !== undefined) this.onMessagesError(refused, key);
    }
  }

  /** Undefined once appended, else what went wrong. */
  private async appendNative(sessionId: string, messages: Array<Record<string, unknown>>): Promise<unknown> {
    try {
      const { error, response } = await this.client.api.POST('/v1/sessions/{sessionId}/messages', {
        params: { path: { sessionId } },
        body: { format: 'anthropic', messages },
        headers: { 'idempotency-key': randomUUID() },
      });
      return response.ok ? undefined : problemError(response, error);
    } catch (error) {
      return error;
    }
  }

  private async readEntries(sessionId: string): Promise<SessionStoreEntry[] | null> {
    const entries: SessionStoreEntry[] = [];
    for (let afterSeq = 0; ; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions/{sessionId}/events', {
        params: { path: { sessionId }, query: { afterSeq, limit: PAGE, types: ['record.added'] } },
      });
      if (error?.code === 'session_not_found') return null;
      if (!data) throw problemError(response, error);
      for (const event of data.events) {
        const entry = entryOf(event);
        if (entry) entries.push(entry);
      }
      if (data.nextAfterSeq === null) return entries;
      afterSeq = data.nextAfterSeq;
    }
  }

  private async createSession(key: SessionKey): Promise<void> {
    try {
      await this.client.createSession({ id: sessionIdOf(key), model: this.model, metadata: metadataOf(key) });
    } catch (error) {
      if (!isProblem(error, 'session_exists')) throw error;
    }
  }

  private async deleteSession(sessionId: string): Promise<void> {
    const { error, response } = await this.client.api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    if (!response.ok && error?.code !== 'session_not_found') throw problemError(response, error);
  }

  /** Every session this adapter created whose key contains `filter`, with that key. */
  private async listed(filter: Record<string, unknown>): Promise<Array<{ key: SessionKey | undefined; session: ListedSession }>> {
    const metadata = JSON.stringify({ [METADATA_KEY]: filter });
    const sessions: ListedSession[] = [];
    for (let cursor: string | undefined; ; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions', { params: { query: { metadata, limit: PAGE, cursor } } });
      if (!data) throw problemError(response, error);
      sessions.push(...data.sessions);
      if (data.nextCursor === null) break;
      cursor = data.nextCursor;
    }
    return sessions.map((session) => ({ key: keyOf(session.metadata), session }));
  }
}

/** Integer epoch milliseconds of the session's last write (an append, or the service's own compaction). */
function mtimeOf(session: ListedSession): number {
  return Math.floor(Date.parse(session.updatedAt));
}

/** One event per uuid in a request: the service refuses a batch repeating an id. */
function withoutRepeatedUuids(entries: SessionStoreEntry[]): SessionStoreEntry[] {
  const seen = new Set<string>();
  return entries.filter((entry) => entry.uuid === undefined || (!seen.has(entry.uuid) && seen.add(entry.uuid)));
}

function chunksOf(entries: SessionStoreEntry[]): SessionStoreEntry[][] {
  const chunks: SessionStoreEntry[][] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(JSON.stringify(entry));
    const last = chunks.at(-1);
    if (last && last.length < MAX_EVENTS && bytes + size <= MAX_BYTES) {
      last.push(entry);
      bytes += size;
    } else {
      chunks.push([entry]);
      bytes = size;
    }
  }
  return chunks;
}

/** The event ids a refused append says the session holds already: all of them (partial_duplicate), or one stored with another body (event_id_reused). */
function storedIdsOf(error: Problem | undefined): Set<string> {
  if (error?.code === 'partial_duplicate' && Array.isArray(error.storedIds)) return new Set(error.storedIds.filter((id) => typeof id === 'string'));
  if (error?.code === 'event_id_reused' && typeof error.eventId === 'string') return new Set([error.eventId]);
  return new Set();
}

/** The service refused the request as it is (a 4xx): sending it again, or in parts, may be answered otherwise. */
function isRefusal(error: unknown): boolean {
  return isProblem(error) && error.status >= 400 && error.status < 500;
}
