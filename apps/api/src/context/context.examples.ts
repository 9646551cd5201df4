/** OpenAPI examples of GET /context, one per format (a user turn, a tool call and its result). */
const common = {
  model: 'gpt-4.1',
  tokens: { estimated: 41, basis: 'estimate', overhead: 0, expectedGrowth: 0, usable: 1047576, limit: 1047576, threshold: 838060, ratio: 0.00004 },
  pivotSeq: null,
  headSeq: 5,
  atSeq: null,
  pendingToolCalls: [],
  repairs: { abortedCallIds: [], droppedResultCallIds: [], droppedCallIds: [] },
  compaction: { state: 'idle', lastError: null, pendingMarkerSeq: null, suppressedReason: null },
  fitted: null,
};
const system = 'You are a careful coding agent.';
const args = JSON.stringify({ cmd: 'npm test' });

export const CONTEXT_EXAMPLES = {
  openai: {
    summary: 'format=openai (Chat Completions messages)',
    value: {
      format: 'openai',
      ...common,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'Run the tests' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: args } }] },
        { role: 'tool', tool_call_id: 'c1', content: '2 passed' },
      ],
    },
  },
  'openai-responses': {
    summary: 'format=openai-responses (Responses input items)',
    value: {
      format: 'openai-responses',
      ...common,
      messages: [
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: system }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests' }] },
        { type: 'function_call', call_id: 'c1', name: 'bash', arguments: args },
        { type: 'function_call_output', call_id: 'c1', output: '2 passed' },
      ],
    },
  },
  anthropic: {
    summary: 'format=anthropic (Messages API; system apart)',
    value: {
      format: 'anthropic',
      ...common,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Run the tests' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'bash', input: { cmd: 'npm test' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: '2 passed' }] },
      ],
    },
  },
  'ai-sdk': {
    summary: 'format=ai-sdk (Vercel AI SDK ModelMessage[]; system apart, for `system`/`instructions`)',
    value: {
      format: 'ai-sdk',
      ...common,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Run the tests' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { cmd: 'npm test' } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'text', value: '2 passed' } }] },
      ],
    },
  },
  neutral: {
    summary: 'format=neutral (our parts)',
    value: {
      format: 'neutral',
      ...common,
      messages: [
        { id: 'system', role: 'system', parts: [{ type: 'text', text: system }] },
        { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Run the tests' }] },
        { id: 'm2', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'bash', input: { cmd: 'npm test' } }] },
        { id: 'm3', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: '2 passed' }] },
      ],
    },
  },
};
