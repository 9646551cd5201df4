import createClient, { type Client } from 'openapi-fetch';
import { isProblem, problemError, readProblem } from './problem';
import { backoffDelay, RequestSender, retrying, sleep } from './retry';
import type { paths } from './schema';
import { sseMessages } from './sse';
import type {
  AppendResult,
  Context,
  DocumentContext,
  ContextFormat,
  ContextQuery,
  CreateSessionRequest,
  NativeAppend,
  NativeFormat,
  NewEvent,
  SearchQuery,
  SessionSearchQuery,
  StoredEvent,
  ToolOutputRef,
  ToolOutputUpload,
} from './types';

export interface SessionStoreClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** A tenant API key (`sk_…`). */
  apiKey: string;
  /** How many times a 429, a 503 or a network error on a repeatable request is retried. Default 3. */
  retries?: number;
  /** A fetch to send requests with (a test double, a proxy agent…). Default: the global one. */
  fetch?: typeof fetch;
}

export interface AppendOptions {
  /** The head this append expects; a mismatch is a 409 `version_conflict` ProblemError (see appendAt). */
  expectedSeq?: number;
  /** Default: a new random key per call, reused by its retries, so a retry never appends twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface AppendAtOptions {
  /** How many times `build` may be called before a conflict is thrown to the caller. Default 5. */
  attempts?: number;
  signal?: AbortSignal;
}

export type ContextOptions<F extends ContextFormat> = Omit<ContextQuery, 'format'> & { format: F; signal?: AbortSignal };

export type UploadBody = string | Uint8Array | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

export interface UploadOptions {
  /** Default `text/plain` for a string, else `application/octet-stream`. Both are stored byte-exact. */
  contentType?: 'text/plain' | 'application/octet-stream';
  signal?: AbortSignal;
}

export interface StreamEventsOptions {
  /** Start after this seq (0, the default, starts at the first event). */
  afterSeq?: number;
  /** Ends the iteration (without an error). */
  signal?: AbortSignal;
}

type FetchResult = { data?: unknown; error?: unknown; response: Response };
/** openapi-fetch's success branch: the one where `data` is not optional. */
type Succeeded<T extends FetchResult> = Extract<T, { data: unknown }>;

function succeeded<T extends FetchResult>(result: T): result is Succeeded<T> {
  return result.error === undefined && result.response.ok;
}

/** The body of a 2xx answer; any other answer throws its ProblemError. */
async function unwrap<T extends FetchResult>(pending: Promise<T>): Promise<Succeeded<T>['data']> {
  const result = await pending;
  if (!succeeded(result)) throw problemError(result.response, result.error);
  return result.data;
}

/** The answer's `format` says which variant of the document's union it is, and so which SDK's types its messages have. */
function inFormat<F extends ContextFormat>(context: DocumentContext, format: F): context is DocumentContext & Context<F> {
  return context.format === format;
}

/** The request body. An AI SDK result's fields are getters, which JSON leaves out: its step is sent as the three fields the service reads. */
function nativeBody(append: NativeAppend, expectedSeq: number | undefined): object {
  const expected = expectedSeq === undefined ? {} : { expectedSeq };
  if (append.format !== 'ai-sdk' || append.response === undefined) return { ...append, ...expected };
  const { response, usage, finishReason } = append.response;
  return { ...append, response: { response: { messages: response.messages }, usage, finishReason }, ...expected };
}

/** Binary data in SDK messages (an AI SDK image or file as bytes) is sent as base64, as the service reads it. */
function jsonOf(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) => {
    if (field instanceof Uint8Array) return Buffer.from(field).toString('base64');
    if (field instanceof ArrayBuffer) return Buffer.from(field).toString('base64');
    return field;
  });
}

function toStream(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

/**
 * The session store's API, typed from its OpenAPI document. `api` is the
 * generated client for any operation; the methods add what agents need on
 * top: idempotent appends, retries that honour Retry-After, optimistic
 * concurrency, typed errors, streamed uploads and the live event stream.
 * Every method throws a ProblemError for a non-2xx answer.
 */
export class SessionStoreClient {
  /** openapi-fetch over the document's paths, with this client's key and retries. */
  readonly api: Client<paths>;
  private readonly baseUrl: string;
  private readonly authorization: string;
  private readonly retries: number;
  /** One attempt, for bodies that cannot be sent twice. */
  private readonly sendOnce: RequestSender;
  private readonly send: RequestSender;

  constructor(options: SessionStoreClientOptions) {
    const fetchImpl = options.fetch ?? fetch;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.authorization = `Bearer ${options.apiKey}`;
    this.retries = options.retries ?? 3;
    this.sendOnce = (request) => fetchImpl(request);
    this.send = retrying(this.sendOnce, this.retries);
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.send, headers: { authorization: this.authorization } });
  }

  /** Creates a session; an Idempotency-Key (generated unless given) makes its retries safe. */
  createSession(body: CreateSessionRequest, options: { idempotencyKey?: string; signal?: AbortSignal } = {}) {
    const headers = { 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() };
    return unwrap(this.api.POST('/v1/sessions', { body, headers, signal: options.signal }));
  }

  getSession(sessionId: string, options: { signal?: AbortSignal } = {}) {
    return unwrap(this.api.GET('/v1/sessions/{sessionId}', { params: { path: { sessionId } }, signal: options.signal }));
  }

  /** Full-text search across the tenant's sessions (docs/lifecycle.md#search). */
  search(query: SearchQuery, options: { signal?: AbortSignal } = {}) {
    return unwrap(this.api.GET('/v1/search', { params: { query }, signal: options.signal }));
  }

  /** Full-text search inside one session, its newest events included; the answer says how far it searched (`searchedThroughSeq`). */
  searchSession(sessionId: string, query: SessionSearchQuery, options: { signal?: AbortSignal } = {}) {
    return unwrap(this.api.GET('/v1/sessions/{sessionId}/search', { params: { path: { sessionId }, query }, signal: options.signal }));
  }

  /**
   * Appends events. Always sent with an Idempotency-Key (a new one unless
   * given, the same across this call's retries), so a retry after a lost
   * answer returns the first answer instead of appending again.
   */
  append(sessionId: string, events: NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const headers = { 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() };
    const body = { events, ...(options.expectedSeq === undefined ? {} : { expectedSeq: options.expectedSeq }) };
    return unwrap(this.api.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId } }, body, headers, signal: options.signal }));
  }

  /**
   * Appends in a provider SDK's own shapes (POST …/messages,
   * docs/clients.md#native-append): the messages sent to the model this step
   * and the response object it returned, as the SDK typed them; the service
   * maps them to events and the response's usage to step.finished. Sent with
   * an Idempotency-Key like append.
   */
  async appendNative<F extends NativeFormat>(sessionId: string, append: NativeAppend<F>, options: AppendOptions = {}): Promise<AppendResult> {
    const request = new Request(`${this.baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/messages`, {
      method: 'POST',
      headers: { authorization: this.authorization, 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() },
      body: jsonOf(nativeBody(append, options.expectedSeq)),
      signal: options.signal,
    });
    const response = await this.send(request);
    if (!response.ok) throw await readProblem(response);
    const result: AppendResult = JSON.parse(await response.text());
    return result;
  }

  /**
   * Rewinds the context to `toSeq` (docs/lifecycle.md#rewind): what clients
   * appended after it leaves the view, the log keeps it. Sent with an
   * Idempotency-Key, so a retry does not rewind twice.
   */
  rewind(sessionId: string, toSeq: number, options: { idempotencyKey?: string; signal?: AbortSignal } = {}) {
    const headers = { 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() };
    return unwrap(this.api.POST('/v1/sessions/{sessionId}/rewind', { params: { path: { sessionId } }, body: { toSeq }, headers, signal: options.signal }));
  }

  /**
   * Optimistic concurrency: reads the head, appends `build(headSeq)` with
   * that expectedSeq, and when another writer got there first (409
   * version_conflict) reads the new head and builds again, up to `attempts`
   * times.
   */
  async appendAt(sessionId: string, build: (headSeq: number) => NewEvent[] | Promise<NewEvent[]>, options: AppendAtOptions = {}): Promise<AppendResult> {
    const attempts = options.attempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const { headSeq } = await this.getSession(sessionId, { signal: options.signal });
      try {
        return await this.append(sessionId, await build(headSeq), { expectedSeq: headSeq, signal: options.signal });
      } catch (error) {
        if (!isProblem(error, 'version_conflict') || attempt >= attempts) throw error;
      }
    }
  }

  /** The model-ready context, its messages typed by the format's SDK (openai, @anthropic-ai/sdk, ai). */
  async context<F extends ContextFormat>(sessionId: string, options: ContextOptions<F>): Promise<Context<F>> {
    const { signal, ...query } = options;
    const context = await unwrap(this.api.GET('/v1/sessions/{sessionId}/context', { params: { path: { sessionId }, query }, signal }));
    if (!inFormat(context, options.format)) throw new Error(`asked for format ${options.format}, the service answered ${context.format}`);
    return context;
  }

  /**
   * Streams a tool output to the service (no buffering here: a multi-GB
   * AsyncIterable is fine) and returns its ref, for a tool_result part's
   * `outputRef`. A string or Uint8Array body is retried like any request;
   * a stream, which cannot be replayed, is sent once.
   */
  async uploadToolOutput(sessionId: string, body: UploadBody, options: UploadOptions = {}): Promise<ToolOutputRef> {
    const replayable = typeof body === 'string' || body instanceof Uint8Array;
    const request = new Request(`${this.baseUrl}/v1/sessions/${encodeURIComponent(sessionId)}/tool-outputs`, {
      method: 'POST',
      headers: { authorization: this.authorization, 'content-type': options.contentType ?? (typeof body === 'string' ? 'text/plain' : 'application/octet-stream') },
      body: replayable ? body : body instanceof ReadableStream ? body : toStream(body),
      duplex: 'half',
      signal: options.signal,
    });
    const response = await (replayable ? this.send : this.sendOnce)(request);
    if (!response.ok) throw await readProblem(response);
    const upload: ToolOutputUpload = JSON.parse(await response.text());
    return upload.ref;
  }

  /**
   * The session's events as they commit (GET …/events/stream). A dropped
   * connection, or the API restarting, is resumed with Last-Event-ID after a
   * backoff, with no event missed or repeated; after `retries` failed
   * reconnections in a row the error is thrown. Ends when `signal` aborts;
   * access that ended (the stream's final `end` event: the key revoked, the
   * tenant suspended or deleted, the session deleted or archived) ends it
   * with the ProblemError the service then answers (401, 403, 404, 409).
   */
  async *streamEvents(sessionId: string, options: StreamEventsOptions = {}): AsyncGenerator<StoredEvent> {
    const { signal } = options;
    let lastSeq = options.afterSeq ?? 0;
    for (let failures = 0; !signal?.aborted; ) {
      try {
        const { data, error, response } = await this.api.GET('/v1/sessions/{sessionId}/events/stream', {
          params: { path: { sessionId } },
          headers: { accept: 'text/event-stream', 'last-event-id': String(lastSeq) },
          parseAs: 'stream',
          signal,
        });
        if (error !== undefined || !response.ok || !data) throw problemError(response, error);
        for await (const message of sseMessages(data)) {
          // Access ended: the reconnection below is refused with the problem that says why.
          if (message.event === 'end') break;
          const event: StoredEvent = JSON.parse(message.data);
          // The service never repeats one; the guard keeps "each event once" true whatever the transport replays.
          if (event.seq <= lastSeq) continue;
          lastSeq = event.seq;
          failures = 0;
          yield event;
        }
      } catch (error) {
        if (signal?.aborted) return;
        // Answers are final (429 and 503 were retried already); transport failures are what resuming is for.
        if (isProblem(error) || failures >= this.retries) throw error;
      }
      if (signal?.aborted) return;
      await sleep(backoffDelay(failures++), signal).catch(() => undefined);
    }
  }
}
