import { validateAnthropicRequest } from './anthropic';
import { validateOpenAIChatMessages } from './openai-chat';
import { validateOpenAIResponsesInput } from './openai-responses';

const say = (role: 'user' | 'assistant', body: string) => ({ role, content: [{ type: 'text', text: body }] });
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'bash', input: {} });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });

describe('validateAnthropicRequest', () => {
  it('accepts a well-formed exchange', () => {
    const messages = [say('user', 'go'), { role: 'assistant', content: [toolUse('t1')] }, { role: 'user', content: [toolResult('t1')] }];
    expect(validateAnthropicRequest({ system: 'sys', messages })).toEqual([]);
  });

  it('reports a tool_use without a tool_result in the next message, in Anthropic’s words', () => {
    const messages = [say('user', 'go'), { role: 'assistant', content: [toolUse('t1'), toolUse('t2')] }, { role: 'user', content: [toolResult('t1')] }];
    expect(validateAnthropicRequest({ messages })).toEqual([
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2. ' +
        'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ]);
  });

  it('reports a tool_result that answers no tool_use of the previous message', () => {
    const messages = [say('user', 'go'), say('assistant', 'hi'), { role: 'user', content: [toolResult('t9')] }];
    expect(validateAnthropicRequest({ messages })).toEqual([
      'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9. ' +
        'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ]);
  });

  it('reports role order, empty content and blank text', () => {
    expect(validateAnthropicRequest({ messages: [say('assistant', 'hi'), say('assistant', ' '), { role: 'user', content: [] }, say('user', '')] })).toEqual([
      'messages: first message must use the "user" role',
      'messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row',
      'messages: text content blocks must contain non-whitespace text',
      'messages.2: all messages must have non-empty content except for the optional final assistant message',
      'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
      'messages.3.content.0.text: text content blocks must be non-empty',
    ]);
  });

  it('reports tool_result blocks after other content, duplicate results and bad ids', () => {
    const messages = [
      say('user', 'go'),
      { role: 'assistant', content: [toolUse('a.b')] },
      { role: 'user', content: [{ type: 'text', text: 'first' }, toolResult('a.b'), toolResult('a.b')] },
    ];
    expect(validateAnthropicRequest({ messages })).toEqual([
      "messages.1.content.0.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      'messages.2.content.1: tool_result blocks must come first in the user message, before any other content',
      'messages.2.content.2: tool_result blocks must come first in the user message, before any other content',
      'messages.2.content.2: each `tool_use` id must have exactly one `tool_result` block: a.b',
    ]);
  });

  it('rejects an empty conversation and a final assistant turn ending in whitespace', () => {
    expect(validateAnthropicRequest({ messages: [] })).toEqual(['messages: at least one message is required']);
    expect(validateAnthropicRequest({ messages: [say('user', 'hi'), say('assistant', 'hello ')] })).toEqual([
      'messages: final assistant content cannot end with trailing whitespace',
    ]);
  });
});

describe('validateOpenAIChatMessages', () => {
  const assistantCalls = (...ids: string[]) => ({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'bash', arguments: '{}' } })),
  });
  const toolMessage = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'ok' });

  it('accepts calls answered by one tool message each, right after', () => {
    expect(validateOpenAIChatMessages([{ role: 'user', content: 'go' }, assistantCalls('c1', 'c2'), toolMessage('c2'), toolMessage('c1')])).toEqual([]);
  });

  it('reports unanswered calls and tool messages without a preceding call', () => {
    expect(
      validateOpenAIChatMessages([assistantCalls('c1', 'c2'), toolMessage('c1'), { role: 'user', content: 'hm' }, toolMessage('c2'), toolMessage('c3')]),
    ).toEqual([
      "messages.[0]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
        'The following tool_call_ids did not have response messages: c2',
      "messages.[3].role: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      "messages.[4].role: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    ]);
  });

  it('reports a second tool message for the same call, duplicate call ids and bad arguments', () => {
    const bad = { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{' } }] };
    expect(validateOpenAIChatMessages([assistantCalls('c1'), toolMessage('c1'), toolMessage('c1'), bad, toolMessage('c1')])).toEqual([
      "messages.[2].role: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      'messages.[3].tool_calls.[0].id: duplicate tool_call id c1',
      'messages.[3].tool_calls.[0].function.arguments: not a JSON string',
    ]);
  });

  it('reports an empty request and an empty assistant message', () => {
    expect(validateOpenAIChatMessages([])).toHaveLength(1);
    expect(validateOpenAIChatMessages([{ role: 'assistant', content: null }])).toEqual([
      "messages.[0]: an assistant message must have 'content' or 'tool_calls'",
    ]);
  });
});

describe('validateOpenAIResponsesInput', () => {
  const fnCall = (id: string) => ({ type: 'function_call', call_id: id, name: 'bash', arguments: '{}' });
  const fnOutput = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'ok' });

  it('accepts each call answered once after it', () => {
    expect(validateOpenAIResponsesInput([fnCall('c1'), fnCall('c2'), fnOutput('c2'), fnOutput('c1')])).toEqual([]);
  });

  it('reports outputs without calls, missing and duplicate outputs, in OpenAI’s words', () => {
    expect(validateOpenAIResponsesInput([fnOutput('c0'), fnCall('c1'), fnCall('c2'), fnOutput('c2'), fnOutput('c2')])).toEqual([
      'No tool call found for function call output with call_id c0.',
      'input[4]: duplicate function_call_output for call_id c2.',
      'No tool output found for function call c1.',
    ]);
  });
});
