import type { AgentInputItem, OpenAIResponsesCompactionArgs, OpenAIResponsesCompactionAwareSession } from '@openai/agents';
import type { components, CreateSessionRequest, SessionStoreClient, StoredEvent } from '@session-store/client';
import { toAgentItems, toResponsesItems } from './items';

export interface SessionStoreSessionOptions {
  client: SessionStoreClient;
  /** The session to use. Without one, the first call creates a session from `create` and keeps its id. */
  sessionId?: string;
  /** How to create the session when `sessionId` is not given (`model` is required by the service). */
  create?: CreateSessionRequest;
}

type EventPage = components['schemas']['EventPage'];

/** What the service renders for a view with no message, as the Responses API refuses an empty input: not an item of the session. */
const OPENING_TEXT = '(conversation continues)';

/**
 * An Agents SDK `Session` kept in the session store: the runner reads the
 * compacted view and appends each turn's items natively (format
 * `openai-responses`); the log keeps everything, compaction and rewind act on
 * the view.
 */
export class SessionStoreSession implements OpenAIResponsesCompactionAwareSession {
  private readonly client: SessionStoreClient;
  private readonly create: CreateSessionRequest | undefined;
  private sessionId: Promise<string> | undefined;

  constructor(options: SessionStoreSessionOptions) {
    if (options.sessionId === undefined && options.create === undefined) throw new Error('SessionStoreSession needs a sessionId or create');
    this.client = options.client;
    this.create = options.create;
    this.sessionId = options.sessionId === undefined ? undefined : Promise.resolve(options.sessionId);
  }

  getSessionId(): Promise<string> {
    // One creation however many calls race for it; a failed creation is tried again by the next call.
    this.sessionId ??= this.client.createSession(this.create ?? { model: '' }).then(
      (session) => session.id,
      (error: unknown) => {
        this.sessionId = undefined;
        throw error;
      },
    );
    return this.sessionId;
  }

  /**
   * The compacted view (what the model is sent), as the SDK's items: after a
   * compaction, the summary in place of the turns it covers. A call still
   * waiting for its result is left out (`pending: 'omit'`): the SDK appends
   * the result with the call when it has one.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const items = await this.viewItems(await this.getSessionId());
    return limit === undefined ? items : items.slice(-limit);
  }

  /** The items as Responses input items, appended natively: the service maps them to its events as if the openai SDK had sent them. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const messages = items.flatMap(toResponsesItems);
    if (messages.length === 0) return;
    await this.client.appendNative(await this.getSessionId(), { format: 'openai-responses', messages });
  }

  /**
   * Rewinds to just before the message holding the view's last item (the log
   * keeps it), then appends again what that message held before the item,
   * when it held several (an assistant's text before its call). Not past a
   * compaction: the summarized range is refused by the service
   * (409 `rewind_behind_pivot`).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const sessionId = await this.getSessionId();
    const items = await this.viewItems(sessionId);
    const last = items.at(-1);
    if (last === undefined) return undefined;
    const context = await this.client.context(sessionId, { format: 'neutral', pending: 'omit' });
    const message = context.messages.at(-1);
    const seq = message === undefined ? undefined : await this.messageSeq(sessionId, message.id, context.pivotSeq ?? 0);
    // The view's last message is the session's system prompt or the compaction's summary: no item of the SDK's to pop.
    if (seq === undefined) return undefined;
    await this.client.rewind(sessionId, seq - 1);
    const kept = await this.viewItems(sessionId);
    const removed = items.slice(kept.length);
    await this.addItems(removed.slice(0, -1));
    return last;
  }

  /**
   * Starts over: deletes the session and creates it again with the same id,
   * model, system prompt and configuration. A rewind to the start would keep
   * the log, but cannot reach behind a compaction; the SDK asks for every
   * item gone, which the deletion is.
   */
  async clearSession(): Promise<void> {
    const sessionId = await this.getSessionId();
    const { model, system, config, metadata } = await this.client.getSession(sessionId);
    await this.client.api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    await this.client.createSession({ id: sessionId, model, ...(system ? { system } : {}), config, metadata });
  }

  /**
   * The runner's hook after each turn. The service compacts on its own when
   * the view crosses the session's threshold, so a turn asks nothing more;
   * `force` (`session.runCompaction({ force: true })`) compacts now and
   * answers when the compaction is committed. Returns null: the summarizer's
   * usage is the service's, not the run's.
   */
  async runCompaction(args?: OpenAIResponsesCompactionArgs): Promise<null> {
    if (args?.force !== true) return null;
    const sessionId = await this.getSessionId();
    const { error, response } = await this.client.api.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId } },
      body: { wait: true },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    if (error !== undefined || !response.ok) throw new Error(`compaction of ${sessionId} failed: ${response.status} ${JSON.stringify(error)}`);
    return null;
  }

  private async viewItems(sessionId: string): Promise<AgentInputItem[]> {
    const context = await this.client.context(sessionId, { format: 'openai-responses', pending: 'omit' });
    const [only, ...rest] = context.messages;
    if (rest.length === 0 && only !== undefined && 'role' in only && only.role === 'user' && isOpening(only.content)) return [];
    return toAgentItems(context.messages);
  }

  private async events(sessionId: string, afterSeq: number): Promise<EventPage> {
    const { data, error } = await this.client.api.GET('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId }, query: { afterSeq, limit: 1000, types: ['message.added'] } },
    });
    if (error !== undefined) throw new Error(`reading the events of ${sessionId} failed: ${JSON.stringify(error)}`);
    return data;
  }

  /** The seq of the message.added event that added the message `id`, searched from the pivot on. */
  private async messageSeq(sessionId: string, id: string, afterSeq: number): Promise<number | undefined> {
    let found: number | undefined;
    for (let cursor: number | null = afterSeq; cursor !== null; ) {
      const page: EventPage = await this.events(sessionId, cursor);
      for (const event of page.events) if (addsMessage(event, id)) found = event.seq;
      cursor = page.nextAfterSeq;
    }
    return found;
  }
}

function isOpening(content: unknown): boolean {
  return Array.isArray(content) && content.length === 1 && content[0]?.type === 'input_text' && content[0]?.text === OPENING_TEXT;
}

function addsMessage(event: StoredEvent, id: string): boolean {
  return event.type === 'message.added' && event.data.message.id === id;
}
