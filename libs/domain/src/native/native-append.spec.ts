// Type-only imports, in a spec: the SDKs' own request and response types are read as they are, with no cast.
// eslint-disable-next-line no-restricted-imports
import type { Message as AnthropicSdkMessage, MessageParam, Usage as AnthropicSdkUsage } from '@anthropic-ai/sdk/resources/messages';
import type { LanguageModelUsage, ModelMessage, StepResult, ToolSet } from 'ai';
// eslint-disable-next-line no-restricted-imports
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
// eslint-disable-next-line no-restricted-imports
import type { Response as OpenAIResponse, ResponseInputItem } from 'openai/resources/responses/responses';
import { errorOf } from '../testing/expect-domain-error';
import { nativeAppendRequest } from './native-append';

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

const added = (role: string, parts: unknown[]) => ({ type: 'message.added', data: { message: { role, parts } } });

describe('nativeAppendRequest: a provider response object, as its SDK returns it', () => {
  it('given a ChatCompletion with parallel tool calls, then the assistant message and step.finished with its usage whole and finish_reason', () => {
    // given
    const completion: ChatCompletion = {
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
            content: 'Looking.',
            refusal: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'ls', arguments: '{"dir":"src"}' } },
              { id: 'call_b', type: 'function', function: { name: 'cat', arguments: '{"path":"a.ts"}' } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 1830, completion_tokens: 41, total_tokens: 1871, prompt_tokens_details: { cached_tokens: 1536 } },
    };
    // when
    const request = nativeAppendRequest({ format: 'openai', response: completion, contextSeq: 7 });
    // then
    expect(request).toEqual({
      events: [
        added('assistant', [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_call', callId: 'call_a', name: 'ls', input: { dir: 'src' } },
          { type: 'tool_call', callId: 'call_b', name: 'cat', input: { path: 'a.ts' } },
        ]),
        { type: 'step.finished', data: { usage: completion.usage, finishReason: 'tool_calls', contextSeq: 7 } },
      ],
    });
  });

  it('given a ChatCompletion refusal and no usage (a stream without include_usage), then the refusal as text and no step.finished', () => {
    // given
    const completion: ChatCompletion = {
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: null, refusal: "I can't help with that." } }],
    };
    // when / then
    expect(nativeAppendRequest({ format: 'openai', response: completion }).events).toEqual([added('assistant', [{ type: 'text', text: "I can't help with that." }])]);
  });

  it('given a Responses Response cut at its limit, then reasoning summary, text and calls in one message, and max_output_tokens as the finish reason', () => {
    // given
    const response: Pick<OpenAIResponse, 'output' | 'usage' | 'status' | 'incomplete_details'> = {
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Check the tests first.' }], encrypted_content: 'gAAA' },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'Running them.', annotations: [] },
            { type: 'refusal', refusal: 'Not the deploy.' },
          ],
        },
        { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'bash', arguments: '{"command":"npm test"}', status: 'completed' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'bash', arguments: 'not json', status: 'completed' },
      ],
      usage: { input_tokens: 2000, input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 }, output_tokens: 80, output_tokens_details: { reasoning_tokens: 64 }, total_tokens: 2080 },
    };
    // when
    const { events } = nativeAppendRequest({ format: 'openai-responses', response });
    // then a call input that is not JSON stays the string the model sent
    expect(events).toEqual([
      added('assistant', [
        { type: 'reasoning', text: 'Check the tests first.' },
        { type: 'text', text: 'Running them.' },
        { type: 'text', text: 'Not the deploy.' },
        { type: 'tool_call', callId: 'call_a', name: 'bash', input: { command: 'npm test' } },
        { type: 'tool_call', callId: 'call_b', name: 'bash', input: 'not json' },
      ]),
      { type: 'step.finished', data: { usage: response.usage, finishReason: 'max_output_tokens' } },
    ]);
  });

  it('given an Anthropic Message with thinking, a redacted block and two tool uses, then one assistant message and stop_reason', () => {
    // given
    const message: Pick<AnthropicSdkMessage, 'content' | 'usage' | 'stop_reason'> = {
      stop_reason: 'tool_use',
      usage: anthropicUsage,
      content: [
        { type: 'thinking', thinking: 'Two files to read.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Reading both.', citations: null },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts' }, caller: { type: 'direct' } },
        { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'b.ts' }, caller: { type: 'direct' } },
      ],
    };
    // when
    const { events } = nativeAppendRequest({ format: 'anthropic', response: message });
    // then
    expect(events).toEqual([
      added('assistant', [
        { type: 'reasoning', text: 'Two files to read.' },
        { type: 'text', text: 'Reading both.' },
        { type: 'tool_call', callId: 'toolu_1', name: 'read', input: { path: 'a.ts' } },
        { type: 'tool_call', callId: 'toolu_2', name: 'read', input: { path: 'b.ts' } },
      ]),
      { type: 'step.finished', data: { usage: anthropicUsage, finishReason: 'tool_use' } },
    ]);
  });

  it('given an AI SDK step whose tools ran, then the assistant message, the results (JSON and denied ones as text), and the usage', () => {
    // given
    const usage: LanguageModelUsage = {
      inputTokens: 900,
      inputTokenDetails: { noCacheTokens: 100, cacheReadTokens: 800, cacheWriteTokens: undefined },
      outputTokens: 30,
      outputTokenDetails: { textTokens: 30, reasoningTokens: 0 },
      totalTokens: 930,
    };
    const step: Pick<StepResult<ToolSet>, 'usage' | 'finishReason'> & { response: { messages: ModelMessage[] } } = {
      finishReason: 'tool-calls',
      usage,
      response: {
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Need the weather.' },
              { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Oslo' } },
              { type: 'tool-call', toolCallId: 'c2', toolName: 'rm', input: { path: '/' } },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { celsius: 4 } } },
              { type: 'tool-result', toolCallId: 'c2', toolName: 'rm', output: { type: 'execution-denied', reason: 'not allowed' } },
            ],
          },
        ],
      },
    };
    // when
    const { events } = nativeAppendRequest({ format: 'ai-sdk', response: step });
    // then
    expect(events).toEqual([
      added('assistant', [
        { type: 'reasoning', text: 'Need the weather.' },
        { type: 'tool_call', callId: 'c1', name: 'weather', input: { city: 'Oslo' } },
        { type: 'tool_call', callId: 'c2', name: 'rm', input: { path: '/' } },
      ]),
      added('tool', [
        { type: 'tool_result', callId: 'c1', name: 'weather', output: '{"celsius":4}' },
        { type: 'tool_result', callId: 'c2', name: 'rm', output: 'not allowed', isError: true },
      ]),
      { type: 'step.finished', data: { usage, finishReason: 'tool-calls' } },
    ]);
  });
});

describe('nativeAppendRequest: request-side messages in the SDK shapes wider than the context renders', () => {
  it('given Chat messages with developer, text parts, an image and a tool result, then one message each, the result without a name (the append takes its call)', () => {
    // given
    const messages: ChatCompletionMessageParam[] = [
      { role: 'developer', content: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://example.test/a.png' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'ok' }] },
    ];
    // when
    const { events } = nativeAppendRequest({ format: 'openai', messages, expectedSeq: 4 });
    // then
    expect(events).toEqual([
      added('system', [{ type: 'text', text: 'be brief' }]),
      added('user', [{ type: 'text', text: 'what is this?' }, { type: 'file', mediaType: 'image/png', url: 'https://example.test/a.png' }]),
      added('tool', [{ type: 'tool_result', callId: 'call_a', output: 'ok' }]),
    ]);
  });

  it('given Responses input items (an easy message with string content, outputs with files), then user text and results with attachments', () => {
    // given
    const items: ResponseInputItem[] = [
      { role: 'user', content: 'look at the page' },
      { type: 'function_call_output', call_id: 'call_a', output: 'done' },
      {
        type: 'function_call_output',
        call_id: 'call_b',
        output: [
          { type: 'input_text', text: 'screenshot' },
          { type: 'input_image', image_url: 'data:image/png;base64,aGVsbG8=', detail: 'auto' },
        ],
      },
    ];
    // when
    const { events } = nativeAppendRequest({ format: 'openai-responses', messages: items });
    // then
    expect(events).toEqual([
      added('user', [{ type: 'text', text: 'look at the page' }]),
      added('tool', [
        { type: 'tool_result', callId: 'call_a', output: 'done' },
        { type: 'tool_result', callId: 'call_b', output: 'screenshot', attachments: [{ type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' }] },
      ]),
    ]);
  });

  it('given Anthropic MessageParams with string content and an error result, then the turn split into tool results and user text', () => {
    // given
    const messages: MessageParam[] = [
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'No such file', is_error: true },
          { type: 'text', text: 'try b.ts instead' },
        ],
      },
    ];
    // when
    const { events } = nativeAppendRequest({ format: 'anthropic', messages });
    // then
    expect(events).toEqual([
      added('tool', [{ type: 'tool_result', callId: 'toolu_1', output: 'No such file', isError: true }]),
      added('user', [{ type: 'text', text: 'try b.ts instead' }]),
    ]);
  });

  it('given an Anthropic request object, then its system prompt first', () => {
    expect(nativeAppendRequest({ format: 'anthropic', messages: { system: 'be brief', messages: [{ role: 'user', content: 'hi' }] } }).events).toEqual([
      added('system', [{ type: 'text', text: 'be brief' }]),
      added('user', [{ type: 'text', text: 'hi' }]),
    ]);
  });

  it('given AI SDK ModelMessages with a system message, string content and a tagged file, then one message each', () => {
    // given
    const messages: ModelMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'read this' }, { type: 'file', mediaType: 'application/pdf', data: { type: 'url', url: new URL('https://example.test/spec.pdf') }, filename: 'spec.pdf' }] },
    ];
    // when the client sends them as JSON (a URL becomes its string)
    const { events } = nativeAppendRequest({ format: 'ai-sdk', messages: JSON.parse(JSON.stringify(messages)) });
    // then
    expect(events).toEqual([
      added('system', [{ type: 'text', text: 'be brief' }]),
      added('user', [{ type: 'text', text: 'read this' }, { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf', filename: 'spec.pdf' }]),
    ]);
  });

  it('given the new input and the response together, then the input first, and no contextSeq (the service infers it)', () => {
    // given
    const response = { stop_reason: 'end_turn', usage: anthropicUsage, content: [{ type: 'text', text: 'Hello.' }] };
    // when
    const { events } = nativeAppendRequest({ format: 'anthropic', messages: [{ role: 'user', content: 'hi' }], response });
    // then
    expect(events).toEqual([
      added('user', [{ type: 'text', text: 'hi' }]),
      added('assistant', [{ type: 'text', text: 'Hello.' }]),
      { type: 'step.finished', data: { usage: anthropicUsage, finishReason: 'end_turn' } },
    ]);
  });
});

describe('nativeAppendRequest: refusals, with the path of what is wrong', () => {
  const refusals: Array<[string, unknown, string, string]> = [
    ['an unknown format', { format: 'gemini', messages: [] }, 'invalid_field', '$.format'],
    ['an unknown field', { format: 'openai', messages: [], stream: true }, 'unknown_field', '$.stream'],
    ['neither messages nor response', { format: 'openai' }, 'invalid_field', '$'],
    ['contextSeq beside messages', { format: 'openai', messages: [{ role: 'user', content: 'hi' }], contextSeq: 3 }, 'invalid_field', '$.contextSeq'],
    ['a message that is not an object', { format: 'openai', messages: ['hi'] }, 'invalid_native_message', '$.messages[0]'],
    ['a call without arguments', { format: 'openai-responses', messages: [{ type: 'function_call', call_id: 'c', name: 'ls' }] }, 'invalid_native_message', '$.messages[0].arguments'],
    ['a hosted tool call', { format: 'openai-responses', response: { output: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] } }, 'unsupported_native_item', '$.response.output[0].type'],
    ['a file kept by OpenAI', { format: 'openai', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }, 'unsupported_native_item', '$.messages[0].content[0].file'],
    ['several choices', { format: 'openai', response: { choices: [{ message: { role: 'assistant', content: 'a' } }, { message: { role: 'assistant', content: 'b' } }] } }, 'unsupported_native_item', '$.response.choices'],
    ['a server tool block', { format: 'anthropic', response: { content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] } }, 'unsupported_native_item', '$.response.content[0].type'],
    ['an AI SDK tool approval', { format: 'ai-sdk', messages: [{ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a', approved: true }] }] }, 'unsupported_native_item', '$.messages[0].content[0].type'],
    ['only encrypted reasoning and no usage', { format: 'openai-responses', response: { output: [{ type: 'reasoning', id: 'rs', summary: [] }] } }, 'empty_batch', '$'],
  ];
  it.each(refusals.map(([label, body, code, path]) => ({ label, body, code, path })))('given $label, then $code at $path', ({ body, code, path }) => {
    // when
    const error = errorOf(() => nativeAppendRequest(body));
    // then
    expect({ code: error.code, path: error.details.path }).toEqual({ code, path });
  });
});
