import { randomUUID } from 'node:crypto';
import {
  BaseSessionService,
  createSession,
  State,
  type AppendEventRequest,
  type CreateSessionRequest,
  type DeleteSessionRequest,
  type Event,
  type GetSessionRequest,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type Session,
} from '@google/adk';
import { isObject, isProblem, problemError, recordEvent, recordValue, type components, type NewEvent, type SessionStoreClient, type StoredEvent } from '@session-store/client';
import {
  EVENT_KIND,
  eventOf,
  messageOf,
  METADATA_KEY,
  SESSION_KIND,
  sessionIdOf,
  STATE_KIND,
  STATE_METADATA_KEY,
  stateSessionIdOf,
} from './records';

type StoredSession = components['schemas']['Session'];
type StateMap = Record<string, unknown>;

export interface ServiceSessionServiceOptions {
  /** The service, with the tenant's API key. */
  client: SessionStoreClient;
  /** The model of the sessions this creates: its context window decides when the service compacts the conversation. Default `gemini-2.5-flash`. */
  model?: string;
  /**
   * Also append each event's conversation (text, function calls and
   * responses) to the session's messages, natively in the `anthropic`
   * format, so the service's context, compaction, search and inspector see
   * it. Default true.
   */
  messages?: boolean;
  /** Called when an event's messages could not be added to the conversation; the event is stored all the same. Default: a process warning. */
  onMessagesError?: (error: unknown, session: Session) => void;
}

const PAGE = 1000;

/**
 * A Google ADK `BaseSessionService` over the session store service. Each
 * ADK session is a service session whose log holds, as `record.added`
 * events, its initial state and then every event ADK appends; getSession
 * replays them. State follows ADK's delta semantics: `temp:` keys are never
 * stored, `app:` and `user:` keys are shared by all of an app's or a user's
 * sessions and live in a state session of their own (see README).
 */
export class ServiceSessionService extends BaseSessionService {
  private readonly client: SessionStoreClient;
  private readonly model: string;
  private readonly messages: boolean;
  private readonly onMessagesError: (error: unknown, session: Session) => void;

  constructor(options: ServiceSessionServiceOptions) {
    super();
    this.client = options.client;
    this.model = options.model ?? 'gemini-2.5-flash';
    this.messages = options.messages ?? true;
    this.onMessagesError = options.onMessagesError ?? ((error) => process.emitWarning(`messages not added to the session's conversation: ${String(error)}`, 'SessionStoreWarning'));
  }

  /** Prefixed keys of the initial state go to the shared state, as ADK's database service does; `temp:` keys are dropped. */
  async createSession({ appName, userId, state = {}, sessionId = randomUUID() }: CreateSessionRequest): Promise<Session> {
    const { own, app, user } = split(state);
    let stored: StoredSession;
    try {
      stored = await this.client.createSession({ id: sessionIdOf(appName, userId, sessionId), model: this.model, metadata: { [METADATA_KEY]: { appName, userId, sessionId } } });
    } catch (error) {
      if (isProblem(error, 'session_exists')) throw new Error(`session ${sessionId} of user ${userId} in app ${appName} already exists`);
      throw error;
    }
    await this.client.append(stored.id, [recordEvent(SESSION_KIND, { state: own })]);
    await this.writeShared(appName, userId, app, user);
    const shared = await this.readShared(appName, userId);
    return createSession({ id: sessionId, appName, userId, state: { ...own, ...shared }, events: [], lastUpdateTime: Date.parse(stored.updatedAt) });
  }

  async getSession({ appName, userId, sessionId, config }: GetSessionRequest): Promise<Session | undefined> {
    const id = sessionIdOf(appName, userId, sessionId);
    const [stored, records, shared] = await Promise.all([this.storedSession(id), this.readRecords(id), this.readShared(appName, userId)]);
    if (!stored || !records) return undefined;
    let own: StateMap = {};
    const events: Event[] = [];
    const indexOf = new Map<string, number>();
    for (const record of records) {
      const initial = recordValue(record, SESSION_KIND);
      if (isObject(initial) && isObject(initial.state)) own = { ...initial.state };
      const event = eventOf(recordValue(record, EVENT_KIND));
      if (!event) continue;
      own = applied(own, event);
      // An event appended again under its id replaces the first, as BaseSessionService.appendEvent does.
      const index = indexOf.get(event.id);
      if (index === undefined) indexOf.set(event.id, events.push(event) - 1);
      else events[index] = event;
    }
    return createSession({ id: sessionId, appName, userId, state: { ...own, ...shared }, events: recent(events, config), lastUpdateTime: Date.parse(stored.updatedAt) });
  }

  /** Paged, ordered and counted as InMemorySessionService does; each session's lastUpdateTime is the service's last write to it. */
  async listSessions({ appName, userId, limit, offset, page, order }: ListSessionsRequest): Promise<ListSessionsResponse> {
    const all = (await this.listed(userId === undefined ? { appName } : { appName, userId })).flatMap(({ metadata, updatedAt }) => {
      const key = metadata[METADATA_KEY];
      if (!isObject(key) || typeof key.sessionId !== 'string' || typeof key.userId !== 'string') return [];
      return [createSession({ id: key.sessionId, appName, userId: key.userId, state: {}, events: [], lastUpdateTime: Date.parse(updatedAt) })];
    });
    if (order !== undefined) {
      const sign = order === 'asc' ? 1 : -1;
      all.sort((a, b) => sign * (a.lastUpdateTime - b.lastUpdateTime) || a.id.localeCompare(b.id));
    }
    const totalItems = all.length;
    if (limit === undefined) return { sessions: offset ? all.slice(offset) : all, page: 1, limit: totalItems, totalItems, totalPages: totalItems === 0 ? 0 : 1 };
    const start = page !== undefined ? (page - 1) * limit : (offset ?? 0);
    return {
      sessions: all.slice(start, start + limit),
      page: page ?? (limit === 0 ? 1 : Math.floor(start / limit) + 1),
      limit,
      totalItems,
      totalPages: limit === 0 ? 0 : Math.ceil(totalItems / limit),
    };
  }

  /** The session only: app and user state outlive it, as in ADK's own services. */
  async deleteSession({ appName, userId, sessionId }: DeleteSessionRequest): Promise<void> {
    const { error, response } = await this.client.api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId: sessionIdOf(appName, userId, sessionId) } } });
    if (!response.ok && error?.code !== 'session_not_found') throw problemError(response, error);
  }

  /**
   * BaseSessionService applies the event to the caller's session (dropping
   * `temp:` keys from its delta, skipping partial events); the event is then
   * stored whole, its shared keys in their state sessions, and its
   * conversation in the session's messages.
   */
  override async appendEvent({ session, event }: AppendEventRequest): Promise<Event> {
    if (event.partial) return event;
    const appended = await super.appendEvent({ session, event });
    const id = sessionIdOf(session.appName, session.userId, session.id);
    await this.client.append(id, [recordEvent(EVENT_KIND, appended)]);
    const { app, user } = split(appended.actions.stateDelta ?? {});
    await this.writeShared(session.appName, session.userId, app, user);
    if (this.messages) await this.appendMessages(id, appended, session);
    // As InMemorySessionService does; a session read back has the service's own clock instead.
    session.lastUpdateTime = appended.timestamp;
    return appended;
  }

  /** The event is stored by now: a failure here is reported, never thrown, so the agent's run goes on. */
  private async appendMessages(id: string, event: Event, session: Session): Promise<void> {
    const message = messageOf(event);
    if (!message) return;
    try {
      await this.client.appendNative(id, { format: 'anthropic', messages: [message] });
    } catch (error) {
      this.onMessagesError(error, session);
    }
  }

  /** `app:` and `user:` deltas, each appended to its state session (created on first write). */
  private async writeShared(appName: string, userId: string, app: StateMap, user: StateMap): Promise<void> {
    if (Object.keys(app).length > 0) await this.appendState(stateSessionIdOf(appName), { appName }, app);
    if (Object.keys(user).length > 0) await this.appendState(stateSessionIdOf(appName, userId), { appName, userId }, user);
  }

  private async appendState(id: string, owner: Record<string, string>, delta: StateMap): Promise<void> {
    const events: NewEvent[] = [recordEvent(STATE_KIND, delta)];
    try {
      await this.client.append(id, events);
    } catch (error) {
      if (!isProblem(error, 'session_not_found')) throw error;
      try {
        await this.client.createSession({ id, model: this.model, metadata: { [STATE_METADATA_KEY]: owner } });
      } catch (created) {
        if (!isProblem(created, 'session_exists')) throw created;
      }
      await this.client.append(id, events);
    }
  }

  /** The app's and the user's state, their keys prefixed, each the fold of its deltas in append order. */
  private async readShared(appName: string, userId: string): Promise<StateMap> {
    const [app, user] = await Promise.all([this.readState(stateSessionIdOf(appName)), this.readState(stateSessionIdOf(appName, userId))]);
    return { ...prefixed(State.APP_PREFIX, app), ...prefixed(State.USER_PREFIX, user) };
  }

  private async readState(id: string): Promise<StateMap> {
    const state: StateMap = {};
    for (const record of (await this.readRecords(id)) ?? []) {
      const delta = recordValue(record, STATE_KIND);
      if (isObject(delta)) Object.assign(state, delta);
    }
    return state;
  }

  private async storedSession(id: string): Promise<StoredSession | undefined> {
    const { data, error, response } = await this.client.api.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId: id } } });
    if (error?.code === 'session_not_found') return undefined;
    if (!data) throw problemError(response, error);
    return data;
  }

  /** The session's records in append order, or undefined if there is no such session. */
  private async readRecords(id: string): Promise<StoredEvent[] | undefined> {
    const records: StoredEvent[] = [];
    for (let afterSeq = 0; ; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions/{sessionId}/events', {
        params: { path: { sessionId: id }, query: { afterSeq, limit: PAGE, types: ['record.added'] } },
      });
      if (error?.code === 'session_not_found') return undefined;
      if (!data) throw problemError(response, error);
      records.push(...data.events);
      if (data.nextAfterSeq === null) return records;
      afterSeq = data.nextAfterSeq;
    }
  }

  private async listed(filter: Record<string, string>): Promise<StoredSession[]> {
    const metadata = JSON.stringify({ [METADATA_KEY]: filter });
    const sessions: StoredSession[] = [];
    for (let cursor: string | undefined; ; ) {
      const { data, error, response } = await this.client.api.GET('/v1/sessions', { params: { query: { metadata, limit: PAGE, cursor } } });
      if (!data) throw problemError(response, error);
      sessions.push(...data.sessions);
      if (data.nextCursor === null) return sessions;
      cursor = data.nextCursor;
    }
  }
}

/** A state or delta split by scope, prefixes stripped from the shared ones; `temp:` keys belong to none. */
function split(state: StateMap): { own: StateMap; app: StateMap; user: StateMap } {
  const own: StateMap = {};
  const app: StateMap = {};
  const user: StateMap = {};
  for (const [key, value] of Object.entries(state)) {
    if (key.startsWith(State.APP_PREFIX)) app[key.slice(State.APP_PREFIX.length)] = value;
    else if (key.startsWith(State.USER_PREFIX)) user[key.slice(State.USER_PREFIX.length)] = value;
    else if (!key.startsWith(State.TEMP_PREFIX)) own[key] = value;
  }
  return { own, app, user };
}

/** The session's own state after the event; its shared keys are read from their state sessions. */
function applied(state: StateMap, event: Event): StateMap {
  return { ...state, ...split(event.actions.stateDelta ?? {}).own };
}

function prefixed(prefix: string, state: StateMap): StateMap {
  return Object.fromEntries(Object.entries(state).map(([key, value]) => [prefix + key, value]));
}

/** The events GetSessionConfig asks for, chosen as InMemorySessionService chooses them. */
function recent(events: Event[], config: GetSessionRequest['config']): Event[] {
  let chosen = config?.numRecentEvents ? events.slice(-config.numRecentEvents) : events;
  if (config?.afterTimestamp) {
    const after = config.afterTimestamp;
    const last = chosen.findLastIndex((event) => event.timestamp < after);
    if (last >= 0) chosen = chosen.slice(last + 1);
  }
  return chosen;
}
