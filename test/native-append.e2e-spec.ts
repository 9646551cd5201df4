import type { Message as AnthropicSdkMessage, Usage as AnthropicSdkUsage } from '@anthropic-ai/sdk/resources/messages';
import type { LanguageModelUsage, ModelMessage } from 'ai';
import fc from 'fast-check';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { Response as OpenAIResponse } from 'openai/resources/responses/responses';
import { Message, renderAiSdk, renderAnthropic, renderOpenAIChat, renderOpenAIResponses } from '@app/domain';
import { CARRIED_BY_ALL, CARRIED_BY_FORMAT, conversationArbitrary } from '@app/domain/view/testing/conversations';
import { Client, HttpResult } from './support/client';
import { startService, TestService } from './support/service';

/**
 * Native append (POST /v1/sessions/{id}/messages): each format's request-side
 * messages and its SDK's response object, written as the format's client
 * holds them. What a format wrote reads back from GET …/context in that
 * format as it was sent; the neutral log is the same whichever format wrote
 * it; a response's usage lands in step.finished mapped to the service's
 * fields; refusals change nothing.
 */

type Format = keyof typeof CARRIED_BY_FORMAT;
const FORMATS = Object.keys(CARRIED_BY_FORMAT) as Format[];

/** A conversation as each format's client holds it (the request its SDK takes), and the context read back in the same shape. */
const asSent: Record<Format, (messages: Message[]) => unknown> = {
  openai: (messages) => renderOpenAIChat({ messages }),
  'openai-responses': (messages) => renderOpenAIResponses({ messages }),
  anthropic: (messages) => renderAnthropic({ messages }),
  'ai-sdk': (messages) => withSystem(renderAiSdk({ messages })),
};
const withSystem = ({ system, messages }: { system?: string; messages: unknown[] }) => (system === undefined ? messages : [{ role: 'system', content: system }, ...messages]);
const readBack: Record<Format, (context: any) => unknown> = {
  openai: (context) => context.messages,
  'openai-responses': (context) => context.messages,
  anthropic: ({ system, messages }) => (system === undefined ? { messages } : { system, messages }),
  'ai-sdk': withSystem,
};

const anthropicUsage: AnthropicSdkUsage = {
  input_tokens: 25,
  output_tokens: 120,
  cache_creation_input_tokens: 1400,
  cache_read_input_tokens: 300,
  cache_creation: null,
  inference_geo: null,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: 'standard',
  speed: null,
};

/** One step in each SDK's response shape: a text and two parallel calls of `read`, with usage. */
const responses: Record<Format, { response: unknown; usage: Record<string, number>; finishReason: string }> = {
  openai: {
    response: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: 'Reading both.',
            refusal: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } },
              { id: 'call_b', type: 'function', function: { name: 'read', arguments: '{"path":"b.ts"}' } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 1830, completion_tokens: 41, total_tokens: 1871, prompt_tokens_details: { cached_tokens: 1536 } },
    } satisfies ChatCompletion,
    usage: { input_tokens: 294, output_tokens: 41, cache_read_tokens: 1536 },
    finishReason: 'tool_calls',
  },
  'openai-responses': {
    response: {
      status: 'completed',
      incomplete_details: null,
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two files.' }] },
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Reading both.', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'read', arguments: '{"path":"a.ts"}', status: 'completed' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'read', arguments: '{"path":"b.ts"}', status: 'completed' },
      ],
      usage: { input_tokens: 2000, input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 }, output_tokens: 80, output_tokens_details: { reasoning_tokens: 64 }, total_tokens: 2080 },
    } satisfies Pick<OpenAIResponse, 'status' | 'incomplete_details' | 'output' | 'usage'>,
    usage: { input_tokens: 976, output_tokens: 80, cache_creation_tokens: 0, cache_read_tokens: 1024 },
    finishReason: 'completed',
  },
  anthropic: {
    response: {
      stop_reason: 'tool_use',
      usage: anthropicUsage,
      content: [
        { type: 'thinking', thinking: 'Two files.', signature: 'sig' },
        { type: 'text', text: 'Reading both.', citations: null },
        { type: 'tool_use', id: 'call_a', name: 'read', input: { path: 'a.ts' }, caller: { type: 'direct' } },
        { type: 'tool_use', id: 'call_b', name: 'read', input: { path: 'b.ts' }, caller: { type: 'direct' } },
      ],
    } satisfies Pick<AnthropicSdkMessage, 'stop_reason' | 'usage' | 'content'>,
    usage: { input_tokens: 25, output_tokens: 120, cache_creation_tokens: 1400, cache_read_tokens: 300 },
    finishReason: 'tool_use',
  },
  'ai-sdk': {
    response: {
      finishReason: 'tool-calls',
      usage: {
        inputTokens: 900,
        inputTokenDetails: { noCacheTokens: 100, cacheReadTokens: 800, cacheWriteTokens: undefined },
        outputTokens: 30,
        outputTokenDetails: { textTokens: 30, reasoningTokens: 0 },
        totalTokens: 930,
      } satisfies LanguageModelUsage,
      response: {
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Two files.' },
              { type: 'text', text: 'Reading both.' },
              { type: 'tool-call', toolCallId: 'call_a', toolName: 'read', input: { path: 'a.ts' } },
              { type: 'tool-call', toolCallId: 'call_b', toolName: 'read', input: { path: 'b.ts' } },
            ],
          },
        ] satisfies ModelMessage[],
      },
    },
    usage: { input_tokens: 100, output_tokens: 30, cache_read_tokens: 800 },
    finishReason: 'tool-calls',
  },
};

/** The two results of the step above, in each format's request shape. */
const results: Record<Format, unknown> = {
  openai: [
    { role: 'tool', tool_call_id: 'call_a', content: 'export const a = 1;' },
    { role: 'tool', tool_call_id: 'call_b', content: 'export const b = 2;' },
  ],
  'openai-responses': [
    { type: 'function_call_output', call_id: 'call_a', output: 'export const a = 1;' },
    { type: 'function_call_output', call_id: 'call_b', output: 'export const b = 2;' },
  ],
  anthropic: [
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_a', content: 'export const a = 1;' },
        { type: 'tool_result', tool_use_id: 'call_b', content: 'export const b = 2;' },
      ],
    },
  ],
  'ai-sdk': [
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_a', toolName: 'read', output: { type: 'text', value: 'export const a = 1;' } },
        { type: 'tool-result', toolCallId: 'call_b', toolName: 'read', output: { type: 'text', value: 'export const b = 2;' } },
      ],
    },
  ] satisfies ModelMessage[],
};

/**
 * OpenAI's call `arguments` as the JSON they hold: the log keeps a call's
 * input as JSON (jsonb), which does not keep its keys' order, so they read
 * back as the same JSON with the keys in the store's order.
 */
const argumentsParsed = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, field) => (key === 'arguments' && typeof field === 'string' ? JSON.parse(field) : field));

const problem = (res: HttpResult) => ({ status: res.status, code: res.body?.code, path: res.body?.path });

describe('native append', () => {
  let service: TestService;
  let client: Client;
  let key: string;
  let sessions = 0;

  beforeAll(async () => {
    service = await startService();
    client = new Client(service.baseUrl);
    ({ key } = await client.createTenant('native-append'));
  });
  afterAll(() => service?.stop());

  const post = (id: string, body: unknown, headers?: Record<string, string>) =>
    client.request('POST', `/v1/sessions/${encodeURIComponent(id)}/messages`, { key, body, headers });
  const context = async (id: string, format: string) => {
    const res = await client.request('GET', `/v1/sessions/${encodeURIComponent(id)}/context?format=${format}`, { key });
    expect(res.status).toBe(200);
    return res.body;
  };
  /** The log's messages without what the service added: message ids, and the reference to each result's stored output. */
  const loggedMessages = async (id: string) =>
    (await client.allEvents(key, id))
      .filter((e) => e.type === 'message.added')
      .map((e) => ({ role: e.data.message.role, parts: e.data.message.parts.map(({ outputRef: _ref, truncated: _cut, ...part }: any) => part) }));
  const newSession = async (prefix: string) => {
    const id = `${prefix}-${++sessions}`;
    await client.createSession(key, { id, model: 'gpt-4.1' });
    return id;
  };

  it.each(FORMATS)('%s: a conversation appended as its SDK holds it reads back in that format as sent', async (format) => {
    await fc.assert(
      fc.asyncProperty(conversationArbitrary(CARRIED_BY_FORMAT[format]), async (conversation) => {
        // given a new session
        const id = await newSession(`rt-${format}`);
        const sent = asSent[format](conversation);
        // when the conversation is appended in the format
        const res = await post(id, { format, messages: sent });
        // then it reads back in the format as it was sent, and the log holds the conversation
        expect(res.status).toBe(201);
        expect(argumentsParsed(readBack[format](await context(id, format)))).toEqual(argumentsParsed(sent));
        expect(await loggedMessages(id)).toEqual(conversation.map(({ role, parts }) => ({ role, parts })));
      }),
      { numRuns: 8 },
    );
  });

  it('the neutral log is the same whichever format wrote a conversation', async () => {
    await fc.assert(
      fc.asyncProperty(conversationArbitrary(CARRIED_BY_ALL), async (conversation) => {
        // when each format appends the conversation into a session of its own
        const logs = [];
        for (const format of FORMATS) {
          const id = await newSession(`same-${format}`);
          expect((await post(id, { format, messages: asSent[format](conversation) })).status).toBe(201);
          logs.push(await loggedMessages(id));
        }
        // then the four logs are one
        for (const log of logs.slice(1)) expect(log).toEqual(logs[0]);
      }),
      { numRuns: 5 },
    );
  });

  it.each(FORMATS)("%s: the SDK's response object whole, then the results: the step, its usage in the service's fields, and the context", async (format) => {
    // given a session with a user turn
    const id = await newSession(`step-${format}`);
    expect((await post(id, { format, messages: [{ role: 'user', content: 'Compare a.ts and b.ts' }] })).status).toBe(201);
    const { headSeq } = await context(id, format);
    const { response, usage, finishReason } = responses[format];
    // when the response is appended at the context it answered, then the results
    const step = await post(id, { format, response, contextSeq: headSeq, expectedSeq: headSeq });
    const after = await post(id, { format, messages: results[format] });
    // then the assistant message and step.finished are appended, the usage mapped and the finish reason kept
    expect(step.status).toBe(201);
    expect(after.status).toBe(201);
    const events = await client.allEvents(key, id);
    const finished = events.filter((e) => e.type === 'step.finished');
    expect(finished.map((e) => e.data)).toEqual([{ usage, finishReason, contextSeq: headSeq }]);
    // and the log holds the calls and their results, named as their calls
    expect((await loggedMessages(id)).slice(1)).toEqual([
      {
        role: 'assistant',
        parts: [
          ...(format === 'openai' ? [] : [{ type: 'reasoning', text: 'Two files.' }]),
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_call', callId: 'call_a', name: 'read', input: { path: 'a.ts' } },
          { type: 'tool_call', callId: 'call_b', name: 'read', input: { path: 'b.ts' } },
        ],
      },
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'call_a', name: 'read', output: 'export const a = 1;' },
          { type: 'tool_result', callId: 'call_b', name: 'read', output: 'export const b = 2;' },
        ],
      },
    ]);
    // and the context in the format ends with the results as the client sent them
    expect(JSON.stringify((await context(id, format)).messages)).toContain(JSON.stringify(format === 'anthropic' ? (results.anthropic as any)[0].content : (results[format] as any)[0]));
  });

  it('an Idempotency-Key replays the first answer; reused for another body it is refused', async () => {
    // given an append with a key
    const id = await newSession('idem');
    const body = { format: 'openai', messages: [{ role: 'user', content: 'hello' }] };
    const first = await post(id, body, { 'idempotency-key': 'native-1' });
    // when it is retried, and the key reused with another body
    const again = await post(id, body, { 'idempotency-key': 'native-1' });
    const other = await post(id, { ...body, messages: [{ role: 'user', content: 'bye' }] }, { 'idempotency-key': 'native-1' });
    // then the retry answers the first append, the reuse is 422, and the log holds one message
    expect(first.status).toBe(201);
    expect({ status: again.status, body: again.body }).toEqual({ status: 201, body: first.body });
    expect(problem(other)).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await loggedMessages(id)).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hello' }] }]);
  });

  it('refuses bad input with the path of what is wrong, and appends nothing', async () => {
    // given a session at head 1
    const id = await newSession('bad');
    const cases: Array<[unknown, { status: number; code: string; path?: string }]> = [
      [{ format: 'gemini', messages: [] }, { status: 400, code: 'invalid_field', path: '$.format' }],
      [{ format: 'openai', messages: [{ role: 'user', content: 42 }] }, { status: 400, code: 'invalid_native_message', path: '$.messages[0].content' }],
      [{ format: 'openai-responses', messages: [{ type: 'web_search_call', id: 'ws', status: 'completed' }] }, { status: 422, code: 'unsupported_native_item', path: '$.messages[0].type' }],
      [{ format: 'anthropic', messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }] }, { status: 400, code: 'unknown_tool_call' }],
      [{ format: 'openai', messages: [{ role: 'user', content: 'hi' }], expectedSeq: 7 }, { status: 409, code: 'version_conflict' }],
    ];
    for (const [body, expected] of cases) {
      // when
      const res = await post(id, body);
      // then
      expect({ body, ...problem(res) }).toMatchObject({ body, ...expected });
    }
    expect((await client.allEvents(key, id)).map((e) => e.type)).toEqual(['session.created']);
  });
});
