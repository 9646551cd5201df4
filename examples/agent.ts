import { components, NewEvent, SessionStoreClient } from '@session-store/client';
import { runTool, ToolOutput } from './tools';

/**
 * What the four examples share: the session, the loop, and what each step
 * appends. Each example supplies only its model call: fetch the context in
 * its SDK's format, pass it to the SDK unchanged, and map the answer to a
 * ModelStep (its usage object passed whole: the service maps it).
 */

const TASK = 'Run the tests of packages/client and check build.log for errors, then report in one sentence.';
const SYSTEM = 'You are a careful coding agent. Use the tools to look before you answer.';
/** A loop that keeps calling tools stops here. */
const MAX_STEPS = 8;
/** Larger outputs are uploaded as a stream and referenced, keeping the append small. */
const INLINE_OUTPUT_BYTES = 64 * 1024;

/** One model call, in the session store's terms. */
export interface ModelStep {
  /** The headSeq of the context the call was sent with: what the usage measured. */
  contextSeq: number;
  text: string;
  calls: Array<{ callId: string; name: string; input: unknown }>;
  /**
   * The SDK's usage object as it returned it (Chat's CompletionUsage, Responses' ResponseUsage,
   * Anthropic's Usage, the AI SDK's LanguageModelUsage): step.finished takes it whole. Absent when the
   * provider reported none: then no step.finished, whose figures the service would trust.
   */
  usage: components['schemas']['NewUsage'] | undefined;
  finishReason?: string;
}

export type CallModel = (store: SessionStoreClient, sessionId: string) => Promise<ModelStep>;

/** SESSION_STORE_URL (default: the local service) and SESSION_STORE_KEY, a tenant API key. */
function storeFromEnv(): SessionStoreClient {
  const apiKey = process.env.SESSION_STORE_KEY;
  if (!apiKey) throw new Error('SESSION_STORE_KEY is not set (a tenant API key)');
  return new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL ?? 'http://127.0.0.1:3000', apiKey });
}

type AssistantPart = components['schemas']['NewAssistantMessage']['parts'][number];
type ToolResultPart = components['schemas']['NewToolResultPart'];

/** A tool's result as appended: its output inline, or uploaded first and referenced. */
async function toolResult(store: SessionStoreClient, sessionId: string, callId: string, { output, isError }: ToolOutput): Promise<ToolResultPart> {
  if (Buffer.byteLength(output) <= INLINE_OUTPUT_BYTES) return { type: 'tool_result', callId, output, isError };
  const ref = await store.uploadToolOutput(sessionId, output);
  return { type: 'tool_result', callId, outputRef: { id: ref.id }, isError };
}

/**
 * Appends one step. The model's message goes first, at the context it
 * answered (expectedSeq: another writer in between is a 409, not a silent
 * interleave), so a crash while the tools run leaves calls that the context
 * shows as aborted. The tools' results and step.finished then go in one append.
 */
async function recordStep(store: SessionStoreClient, sessionId: string, step: ModelStep): Promise<void> {
  const parts: AssistantPart[] = step.calls.map((call) => ({ type: 'tool_call', ...call }));
  if (step.text) parts.unshift({ type: 'text', text: step.text });
  if (parts.length > 0) {
    const message: NewEvent = { type: 'message.added', data: { message: { role: 'assistant', parts } } };
    await store.append(sessionId, [message], { expectedSeq: step.contextSeq });
  }
  const results = await Promise.all(step.calls.map((call) => toolResult(store, sessionId, call.callId, runTool(call.name, call.input))));
  const events: NewEvent[] = results.length > 0 ? [{ type: 'message.added', data: { message: { role: 'tool', parts: results } } }] : [];
  if (step.usage) events.push({ type: 'step.finished', data: { usage: step.usage, finishReason: step.finishReason, contextSeq: step.contextSeq } });
  if (events.length > 0) await store.append(sessionId, events);
}

/** The session's token totals, read back from its step.finished events, which hold every provider's usage in one shape. */
async function loggedTokens(store: SessionStoreClient, sessionId: string): Promise<{ input: number; output: number }> {
  const totals = { input: 0, output: 0 };
  for (let afterSeq: number | null = 0; afterSeq !== null; ) {
    const page: { data?: components['schemas']['EventPage']; error?: unknown } = await store.api.GET('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId }, query: { afterSeq, types: ['step.finished'] } },
    });
    const data = page.data;
    if (!data) throw new Error(`reading the steps failed: ${JSON.stringify(page.error)}`);
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
export function runAgent(name: string, model: string, callModel: CallModel): void {
  const run = async () => {
    const store = storeFromEnv();
    const session = await store.createSession({ model, system: SYSTEM, metadata: { title: TASK, example: name } });
    const task: NewEvent = { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: TASK }] } } };
    await store.append(session.id, [task]);
    const steps: ModelStep[] = [];
    for (let more = true; more && steps.length < MAX_STEPS; ) {
      const step = await callModel(store, session.id);
      await recordStep(store, session.id, step);
      steps.push(step);
      more = step.calls.length > 0;
    }
    const calls = steps.reduce((n, s) => n + s.calls.length, 0);
    const { input, output } = await loggedTokens(store, session.id);
    const answer = JSON.stringify(steps.at(-1)?.text ?? '');
    console.log(`${name}: session ${session.id}, ${steps.length} steps, ${calls} tool calls, ${input} input and ${output} output tokens: ${answer}`);
  };
  run().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
