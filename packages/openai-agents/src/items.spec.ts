import type { AgentInputItem } from '@openai/agents';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { toAgentItems, toResponsesItems, UnsupportedItemError } from './items';

describe('toResponsesItems (the SDK items the runner hands addItems → Responses input items)', () => {
  it('maps messages, calls, results and reasoning to the Responses API shapes', () => {
    const items: AgentInputItem[] = [
      { role: 'system', content: 'be brief' },
      { type: 'message', role: 'user', content: 'list /' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'and this' },
          { type: 'input_image', image: 'https://example.test/a.png', detail: 'high' },
          { type: 'input_file', file: 'https://example.test/a.pdf', filename: 'a.pdf' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', content: [{ type: 'input_text', text: 'ls first' }], providerData: { encrypted_content: 'x' } },
      { type: 'reasoning', content: [] },
      { type: 'function_call', id: 'fc_1', callId: 'call_1', name: 'ls', arguments: '{"dir":"/"}', status: 'completed', providerData: { any: 1 } },
      { type: 'function_call_result', callId: 'call_1', name: 'ls', status: 'completed', output: { type: 'text', text: 'a b' } },
      { type: 'function_call_result', callId: 'call_2', name: 'shot', status: 'completed', output: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image: 'https://example.test/s.png' }] },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }, { type: 'refusal', refusal: 'not that' }] },
    ];
    const mapped = items.flatMap(toResponsesItems) satisfies ResponseInputItem[];
    expect(mapped).toEqual([
      { type: 'message', role: 'system', content: 'be brief' },
      { type: 'message', role: 'user', content: 'list /' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'and this' },
          { type: 'input_image', image_url: 'https://example.test/a.png', detail: 'high' },
          { type: 'input_file', filename: 'a.pdf', file_url: 'https://example.test/a.pdf' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'ls first' }] },
      { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{"dir":"/"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a b' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: 'see' },
          { type: 'input_image', image_url: 'https://example.test/s.png', detail: 'auto' },
        ],
      },
      { type: 'message', role: 'assistant', content: 'done' },
      { type: 'message', role: 'assistant', content: 'not that' },
    ]);
  });

  it('refuses what the store cannot hold, naming it', () => {
    const refused: AgentInputItem[] = [
      { type: 'hosted_tool_call', name: 'web_search_call' },
      { type: 'compaction', encrypted_content: 'opaque' },
      { role: 'user', content: [{ type: 'input_image', image: { id: 'file_1' } }] },
      { role: 'user', content: [{ type: 'audio', audio: 'AAAA' }] },
      { type: 'function_call_result', callId: 'c', name: 'f', status: 'completed', output: { type: 'file', file: { id: 'file_2' } } },
    ];
    for (const item of refused) expect(() => toResponsesItems(item)).toThrow(UnsupportedItemError);
    expect(() => toResponsesItems(refused[0])).toThrow('an item of type hosted_tool_call');
  });
});

describe('toAgentItems (the context in format openai-responses → the SDK items getItems returns)', () => {
  it('maps the rendered items, naming each result as its call', () => {
    const context: ResponseInputItem[] = [
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'be brief' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list' }, { type: 'input_image', image_url: 'https://example.test/a.png', detail: 'auto' }] },
      { type: 'message', role: 'assistant', content: 'listing' },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a b' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'shot' }] },
    ];
    expect(toAgentItems(context)).toEqual([
      { type: 'message', role: 'system', content: 'be brief' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'list' },
          { type: 'input_image', image: 'https://example.test/a.png', detail: 'auto' },
        ],
      },
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'listing' }] },
      { type: 'function_call', callId: 'c1', name: 'ls', arguments: '{}', status: 'completed' },
      { type: 'function_call_result', callId: 'c1', name: 'ls', status: 'completed', output: 'a b' },
      { type: 'function_call_result', callId: 'c1', name: 'ls', status: 'completed', output: [{ type: 'input_text', text: 'shot' }] },
    ]);
  });

  it('round-trips what addItems appends, as the service reads it back', () => {
    const items: AgentInputItem[] = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run' }] },
      { type: 'function_call', callId: 'c1', name: 'run', arguments: '{}', status: 'completed' },
      { type: 'function_call_result', callId: 'c1', name: 'run', status: 'completed', output: 'ok' },
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'passed' }] },
    ];
    expect(toAgentItems(items.flatMap(toResponsesItems))).toEqual(items);
  });
});
