import { validateAnthropicRequest, validateOpenAIChatMessages } from '@app/domain';
import { aiSdkSchemaErrors } from '@app/domain/view/testing/ai-sdk-schema';
import { Client } from './client';
import { waitFor } from './service';

/**
 * A scripted coding agent for the compaction tests: each turn is a user
 * request, a tool call, its (long) output, an answer, then the step's usage
 * as the provider would report it (the context's own figure, the answer as
 * its output).
 */
export function turnEvents(session: string, turn: number, outputLines = 120) {
  const callId = `${session}-call-${turn}`;
  const output = [
    `FAIL src/module${turn}.spec.ts`,
    `Error: expected ${turn} to equal ${turn + 1}`,
    ...Array.from({ length: outputLines }, (_, line) => `  at check${line} (src/module${turn}.ts:${line + 1}:${(line * 7) % 80}) value=${(line * 7919 + turn) % 100003}`),
  ].join('\n');
  return [
    { type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: `Turn ${turn}: fix the failing test in src/module${turn}.ts; you must keep Node 20.` }] } } },
    {
      type: 'message.added',
      data: {
        message: {
          role: 'assistant',
          parts: [
            { type: 'text', text: `I will run the tests for src/module${turn}.ts.` },
            { type: 'tool_call', callId, name: 'bash', input: { command: `npm test -- src/module${turn}.spec.ts` } },
          ],
        },
      },
    },
    { type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId, name: 'bash', output, isError: true }] } } },
    { type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'text', text: `Fixed src/module${turn}.ts: the off-by-one in check${turn}. Next I will run the whole suite.` }] } } },
  ];
}

/** The output a scripted step reports: its answer, the turn's last message. */
export const STEP_OUTPUT_TOKENS = 200;

export const step = (inputTokens: number, finishReason?: string) => ({
  type: 'step.finished',
  data: { usage: { input_tokens: inputTokens, output_tokens: STEP_OUTPUT_TOKENS }, ...(finishReason ? { finishReason } : {}) },
});

export class Agent {
  constructor(
    readonly client: Client,
    readonly key: string,
    readonly sessionId: string,
  ) {}

  get path() {
    return `/v1/sessions/${encodeURIComponent(this.sessionId)}`;
  }

  async context(format = 'neutral') {
    const res = await this.client.request('GET', `${this.path}/context?format=${format}`, { key: this.key });
    if (res.status !== 200) throw new Error(`context: ${res.status} ${res.text}`);
    return res.body;
  }

  async append(events: unknown[]) {
    const res = await this.client.append(this.key, this.sessionId, { events });
    if (res.status !== 201) throw new Error(`append: ${res.status} ${res.text}`);
    return res.body;
  }

  /** One turn; the step reports the context's size as the provider would have counted it. Returns the append response that reports the turn's marker, if any. */
  async turn(turn: number, options: { outputLines?: number; extraUsage?: number } = {}) {
    const messages = await this.append(turnEvents(this.sessionId, turn, options.outputLines));
    const { tokens } = await this.context();
    // The figure already holds the answer: the provider counted it as the step's output, the rest as its input.
    const stepped = await this.append([step(tokens.estimated + (options.extraUsage ?? 0) - STEP_OUTPUT_TOKENS)]);
    // The messages may have opened the marker themselves, and a quick worker may have closed it before the step.
    return stepped.compaction?.pendingMarkerSeq || !messages.compaction?.pendingMarkerSeq ? stepped : messages;
  }

  /** Turns until a step's append reports a pending marker; returns it. */
  async untilMarker(firstTurn = 1, maxTurns = 40, options: { outputLines?: number } = {}): Promise<{ markerSeq: number; turns: number }> {
    for (let turn = firstTurn; turn < firstTurn + maxTurns; turn++) {
      const appended = await this.turn(turn, options);
      if (appended.compaction?.pendingMarkerSeq) return { markerSeq: appended.compaction.pendingMarkerSeq, turns: turn };
    }
    throw new Error(`no compaction marker after ${maxTurns} turns`);
  }

  async compactions() {
    const res = await this.client.request('GET', `${this.path}/compactions`, { key: this.key });
    if (res.status !== 200) throw new Error(`compactions: ${res.status} ${res.text}`);
    return res.body;
  }

  /** Waits (by reading the history) until the marker is no longer pending or running; returns its entry. */
  async settled(markerSeq: number, timeoutMs = 30_000) {
    let entry: any;
    await waitFor(
      async () => {
        entry = (await this.compactions()).compactions.find((c: any) => c.markerSeq === markerSeq);
        return entry !== undefined && entry.status !== 'pending' && entry.status !== 'running';
      },
      `marker ${markerSeq} settled`,
      timeoutMs,
    );
    return entry;
  }

  async state() {
    const res = await this.client.request('GET', this.path, { key: this.key });
    if (res.status !== 200) throw new Error(`session: ${res.status} ${res.text}`);
    return res.body;
  }

  async events(): Promise<any[]> {
    return this.client.allEvents(this.key, this.sessionId);
  }

  /** The context in the providers' formats passes their ordering rules (invariant 6), and ai-sdk the AI SDK's own schema. */
  async expectValidForProviders(): Promise<void> {
    const anthropic = await this.context('anthropic');
    expect(validateAnthropicRequest({ system: anthropic.system, messages: anthropic.messages })).toEqual([]);
    const openai = await this.context('openai');
    expect(validateOpenAIChatMessages(openai.messages)).toEqual([]);
    expect(aiSdkSchemaErrors((await this.context('ai-sdk')).messages)).toEqual([]);
  }
}

/** A tenant's session with small limits, so a few turns cross the trigger. */
export async function agentSession(client: Client, key: string, id: string, config: Record<string, unknown> = {}): Promise<Agent> {
  await client.createSession(key, { id, model: 'gpt-4.1', system: 'You are a careful coding agent.', config: { limits: { context: 16_000, output: 2_000 }, ...config } });
  return new Agent(client, key, id);
}
