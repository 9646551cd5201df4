import type { AgentInputItem, OpenAIResponsesCompactionArgs, OpenAIResponsesCompactionAwareSession } from '@openai/agents';
import type { components, CreateSessionRequest, SessionStoreClient } from '@session-store/client';
import { toAgentItems, toResponsesItems } from './items';

export interface SessionStoreSessionOptions {
  client: SessionStoreClient;
  /** The session to use. Without one, the first call creates a session from `create` and keeps its id. */
  sessionId?: string;
  /** How to create the session when `sessionId` is not given (`model` is required by the service). */
  create?: CreateSessionRequest;
}

type EventPage = components['schemas']['EventPage'];
type Message = components['schemas']['Message'];
type Part = Message['parts'][number];
type NewMessage = components['schemas']['NewMessage'];
type AssistantPart = components['schemas']['NewAssistantMessage']['parts'][number];
type ToolResultPart = components['schemas']['ToolResultPart'];
type NewToolResultPart = components['schemas']['NewToolResultPart'];

/** What the service renders for a view with no message (the Responses API refuses an empty input): not an item of the session. */
const OPENING_TEXT = '(conversation continues)';

/**
 * An Agents SDK `Session` kept in the session store: the runner reads the
 * compacted view and appends each turn's items natively (format
 * `openai-responses`); the log keeps everything, compaction and rewind act on
 * the view.
 */
export class SessionStoreSession implements OpenAIResponsesCompactionAwareSession {
  private readonly client: SessionStoreClient;
  /** Where the id comes from: the one given, or a session created on first use. */
  private readonly resolveId: () => Promise<string>;
  private sessionId: Promise<string> | undefined;

  constructor(options: SessionStoreSessionOptions) {
    const { client, sessionId, create } = options;
    this.client = client;
    if (sessionId !== undefined) this.resolveId = () => Promise.resolve(sessionId);
    else if (create !== undefined) this.resolveId = async () => (await client.createSession(create)).id;
    else throw new Error('SessionStoreSession needs a sessionId or create');
  }

  getSessionId(): Promise<string> {
    // One creation however many calls race for it; a failed creation is tried again by the next call.
    this.sessionId ??= this.resolveId().catch((error: unknown) => {
      this.sessionId = undefined;
      throw error;
    });
    return this.sessionId;
  }

  /**
   * The compacted view (what the model is sent), as the SDK's items: after a
   * compaction, the summary in place of the turns it covers; a call left
   * without a result (a run that stopped mid-turn) with the service's
   * `aborted` result, which the SDK's result replaces when it comes.
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
   * Pops the last item the log holds in the view: rewinds to just before its
   * message (the log keeps it) and appends that message again without it
   * when the message held more (an assistant's text before its call, one of
   * several results). Nothing to pop (undefined) when the view holds only
   * the system prompt and a compaction's summary: the summarized range is
   * not rewound. The last of several parallel calls is refused: their ids
   * stay issued after a rewind, so the others could not be appended again.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const sessionId = await this.getSessionId();
    const [items, view] = await Promise.all([this.viewItems(sessionId), this.client.context(sessionId, { format: 'neutral' })]);
    // Tool messages split across their calls are `id#2`…; synthetic results (a call never answered) are in no event.
    const logged = view.messages.filter((message) => message.metadata?.kind !== 'synthetic' && message.id !== 'system');
    const lastId = logged.at(-1)?.id.replace(/#\d+$/, '');
    const event = lastId === undefined ? undefined : await this.messageEvent(sessionId, lastId);
    if (event === undefined) return undefined;
    const { seq, message } = event;
    const index = poppedPart(message);
    const popped = index === undefined ? undefined : message.parts[index];
    const rest = remainder(message, index);
    if (popped?.type === 'tool_call' && rest?.role === 'assistant' && rest.parts.some((part) => part.type === 'tool_call')) {
      throw new Error(`cannot pop call ${popped.callId} alone: the other calls of its turn keep their ids after a rewind and could not be appended again`);
    }
    await this.client.rewind(sessionId, seq - 1);
    if (rest !== undefined) await this.client.append(sessionId, [{ type: 'message.added', data: { message: rest } }]);
    return items.findLast((item) => isItemOf(item, message.role, popped));
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
    const { error, response } = await this.client.api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } });
    if (error !== undefined || !response.ok) throw new Error(`deleting ${sessionId} failed: ${response.status} ${JSON.stringify(error)}`);
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
    const { data, error, response } = await this.client.api.POST('/v1/sessions/{sessionId}/compactions', {
      params: { path: { sessionId } },
      body: { wait: true },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    if (error !== undefined || !response.ok) throw new Error(`compaction of ${sessionId} failed: ${response.status} ${JSON.stringify(error)}`);
    // 202: still running when the wait ended; it commits in the background, as the hook is best-effort.
    if ('status' in data && data.status === 'failed') throw new Error(`compaction of ${sessionId} failed: ${JSON.stringify(data.failures)}`);
    return null;
  }

  private async viewItems(sessionId: string): Promise<AgentInputItem[]> {
    const context = await this.client.context(sessionId, { format: 'openai-responses' });
    const [only, ...rest] = context.messages;
    // The opening item, or a user's message with the same text: the neutral view, which has no opening, tells them apart.
    const opening = rest.length === 0 && only !== undefined && 'role' in only && only.role === 'user' && isOpening(only.content);
    if (opening && (await this.client.context(sessionId, { format: 'neutral' })).messages.length === 0) return [];
    return toAgentItems(context.messages);
  }

  private async events(sessionId: string, afterSeq: number): Promise<EventPage> {
    const { data, error } = await this.client.api.GET('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId }, query: { afterSeq, limit: 1000, types: ['message.added'] } },
    });
    if (error !== undefined) throw new Error(`reading the events of ${sessionId} failed: ${JSON.stringify(error)}`);
    return data;
  }

  /**
   * The message.added event that added the message `id`; none for the
   * service's own messages (a compaction's summary). The whole log is read:
   * the turns a compaction kept verbatim are before its pivot.
   */
  private async messageEvent(sessionId: string, id: string): Promise<{ seq: number; message: Message } | undefined> {
    let found: { seq: number; message: Message } | undefined;
    for (let cursor: number | null = 0; cursor !== null; ) {
      const page: EventPage = await this.events(sessionId, cursor);
      for (const event of page.events) if (event.type === 'message.added' && event.data.message.id === id) found = { seq: event.seq, message: event.data.message };
      cursor = page.nextAfterSeq;
    }
    return found;
  }
}

function isOpening(content: unknown): boolean {
  return Array.isArray(content) && content.length === 1 && content[0]?.type === 'input_text' && content[0]?.text === OPENING_TEXT;
}

/**
 * The part that renders a message's last item: the last result of a tool
 * message, the last call of an assistant message (its texts render before
 * its calls), else its last text; none for a user or system message, which
 * is one item whole.
 */
function poppedPart(message: Message): number | undefined {
  if (message.role === 'user' || message.role === 'system') return undefined;
  for (const type of ['tool_result', 'tool_call', 'text'] as const) {
    const index = message.parts.findLastIndex((part) => part.type === type);
    if (index >= 0) return index;
  }
  return undefined;
}

/** The message without the popped part, as appended again; none when nothing else is left. */
function remainder(message: Message, popped: number | undefined): NewMessage | undefined {
  if (popped === undefined) return undefined;
  const parts = message.parts.filter((_part, at) => at !== popped);
  const metadata = message.metadata === undefined ? {} : { metadata: message.metadata };
  if (message.role === 'assistant') {
    const kept = parts.filter((part): part is AssistantPart => part.type !== 'tool_result');
    return kept.length > 0 ? { role: 'assistant', parts: kept, ...metadata } : undefined;
  }
  const results = parts.flatMap((part) => (part.type === 'tool_result' ? [resultAsAppended(part)] : []));
  return results.length > 0 ? { role: 'tool', parts: results, ...metadata } : undefined;
}

/** A stored result as appended: a cached output by its ref (the cache keeps it whole), else its text. */
function resultAsAppended(part: ToolResultPart): NewToolResultPart {
  const { type, callId, name, isError, attachments } = part;
  const output = part.outputRef === undefined ? { output: part.output } : { outputRef: { id: part.outputRef.id } };
  return { type, callId, name, ...(isError === undefined ? {} : { isError }), ...(attachments === undefined ? {} : { attachments }), ...output };
}

/** Whether the view's item is the one the popped part (or the whole message, without one) rendered. */
function isItemOf(item: AgentInputItem, role: Message['role'], part: Part | undefined): boolean {
  if (part?.type === 'tool_result') return item.type === 'function_call_result' && item.callId === part.callId;
  if (part?.type === 'tool_call') return item.type === 'function_call' && item.callId === part.callId;
  return 'role' in item && item.role === role;
}
