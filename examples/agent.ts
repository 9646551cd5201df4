import { components, Context, NativeAppend, NativeFormat, SessionStoreClient } from '@session-store/client';

type EventPage = components['schemas']['EventPage'];
import { runTool, ToolOutput } from './tools';

/**
 * What the four examples share: the session, the loop, and its appends, all
 * in the SDK's own shapes (POST …/messages): the service maps the SDK's
 * response object to events and its usage to step.finished. Each example
 * supplies its model call: the context in its format passed to the SDK
 * unchanged, the response returned whole, and the tool results in the shape
 * its SDK sends them.
 */

const TASK = 'Run the tests of packages/client and check build.log for errors, then report in one sentence.';
const SYSTEM = 'You are a careful coding agent. Use the tools to look before you answer.';
/** A loop that keeps calling tools stops here. */
const MAX_STEPS = 8;

export interface ToolCall {
  callId: string;
  name: string;
  input: unknown;
}

/** One model in its SDK's format. */
export interface Model<F extends NativeFormat> {
  format: F;
  /** Sends the context to the model; returns the append of its response object as it came, its answer's text, and the tool calls to run. */
  call(context: Context<F>): Promise<{ answer: NativeAppend<F>; text: string; calls: ToolCall[] }>;
  /** The append of the tools' results, as the SDK sends them to the model. */
  results(results: Array<ToolCall & ToolOutput>): NativeAppend<F>;
}

/** SESSION_STORE_URL (default: the local service) and SESSION_STORE_KEY, a tenant API key. */
function storeFromEnv(): SessionStoreClient {
  const apiKey = process.env.SESSION_STORE_KEY;
  if (!apiKey) throw new Error('SESSION_STORE_KEY is not set (a tenant API key)');
  return new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL ?? 'http://127.0.0.1:3000', apiKey });
}

/**
 * One step. The response goes first, at the context it answered
 * (expectedSeq: another writer in between is a 409, not a silent
 * interleave), with contextSeq saying what its usage measured; so a crash
 * while the tools run leaves calls that the context shows as aborted. The
 * results follow once the tools ran.
 */
async function step<F extends NativeFormat>(store: SessionStoreClient, sessionId: string, model: Model<F>) {
  const context = await store.context(sessionId, { format: model.format });
  const { answer, text, calls } = await model.call(context);
  await store.appendNative(sessionId, { ...answer, contextSeq: context.headSeq }, { expectedSeq: context.headSeq });
  if (calls.length > 0) await store.appendNative(sessionId, model.results(calls.map((call) => ({ ...call, ...runTool(call.name, call.input) }))));
  return { text, calls: calls.length };
}

/** The session's token totals, read back from its step.finished events, which hold every provider's usage in one shape. */
async function loggedTokens(store: SessionStoreClient, sessionId: string): Promise<{ input: number; output: number }> {
  const totals = { input: 0, output: 0 };
  for (let afterSeq: number | null = 0; afterSeq !== null; ) {
    const { data, error }: { data?: EventPage; error?: unknown } = await store.api.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { afterSeq, types: ['step.finished'] } } });
    if (!data) throw new Error(`reading the steps failed: ${JSON.stringify(error)}`);
    for (const event of data.events) {
      if (event.type !== 'step.finished') continue;
      const { input_tokens, output_tokens, cache_read_tokens = 0, cache_creation_tokens = 0 } = event.data.usage;
      totals.input += input_tokens + cache_read_tokens + cache_creation_tokens;
      totals.output += output_tokens;
    }
    afterSeq = data.nextAfterSeq;
  }
  return totals;
}

/** Starts a session on TASK and runs the loop until the model answers without calling a tool; prints one line. */
export function runAgent<F extends NativeFormat>(name: string, model: string, sdk: Model<F>): void {
  const run = async () => {
    const store = storeFromEnv();
    const session = await store.createSession({ model, system: SYSTEM, metadata: { title: TASK, example: name } });
    await store.append(session.id, [{ type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: TASK }] } } }]);
    let steps = 0;
    let calls = 0;
    let answer = '';
    for (let more = true; more && steps < MAX_STEPS; steps++) {
      const done = await step(store, session.id, sdk);
      calls += done.calls;
      answer = done.text;
      more = done.calls > 0;
    }
    const { input, output } = await loggedTokens(store, session.id);
    console.log(`${name}: session ${session.id}, ${steps} steps, ${calls} tool calls, ${input} input and ${output} output tokens: ${JSON.stringify(answer)}`);
  };
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
