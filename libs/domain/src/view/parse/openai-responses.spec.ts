import { ANTHROPIC_OPENING_TEXT, ResponsesInputItem } from '../render';
import { parseOpenAIResponses } from './openai-responses';

describe('parseOpenAIResponses', () => {
  it('given messages, calls and outputs, then an assistant message per texts-then-calls run, and one tool message per run of outputs', () => {
    // given: two assistant messages sent in a row (a1: text and a call; a2: text after the result)
    const items: ResponsesInputItem[] = [
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'be brief' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list' }] },
      { type: 'message', role: 'assistant', content: 'listing' },
      { type: 'message', role: 'assistant', content: 'both dirs' },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{"dir":"/"}' },
      { type: 'function_call', call_id: 'c2', name: 'ls', arguments: '{"dir":"/tmp"}' },
      { type: 'message', role: 'assistant', content: 'and a note' },
      { type: 'function_call_output', call_id: 'c1', output: 'a b' },
      { type: 'function_call_output', call_id: 'c2', output: 'c' },
      { type: 'message', role: 'assistant', content: 'done' },
    ];
    // when
    const parsed = parseOpenAIResponses(items);
    // then
    expect(parsed).toEqual([
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', text: 'list' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'listing' },
          { type: 'text', text: 'both dirs' },
          { type: 'tool_call', callId: 'c1', name: 'ls', input: { dir: '/' } },
          { type: 'tool_call', callId: 'c2', name: 'ls', input: { dir: '/tmp' } },
        ],
      },
      // A text after a call: the render puts a message's texts first, so this is the next message.
      { role: 'assistant', parts: [{ type: 'text', text: 'and a note' }] },
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'c1', name: 'ls', output: 'a b' },
          { type: 'tool_result', callId: 'c2', name: 'ls', output: 'c' },
        ],
      },
      { role: 'assistant', parts: [{ type: 'text', text: 'done' }] },
    ]);
  });

  it('given images and PDFs, inline and by URL, in a user message and an output, then files; a text note among the output’s files is dropped', () => {
    // given
    const items: ResponsesInputItem[] = [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_image', image_url: 'https://example.test/a.webp', detail: 'auto' },
          { type: 'input_file', file_url: 'https://example.test/spec.pdf' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'shot', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'c1',
        output: [
          { type: 'input_text', text: 'taken' },
          { type: 'input_image', image_url: 'data:image/png;base64,aGVsbG8=', detail: 'auto' },
          { type: 'input_file', filename: 'r.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          { type: 'input_text', text: '[file: log.txt]' },
        ],
      },
    ];
    // when
    const parsed = parseOpenAIResponses(items);
    // then
    expect(parsed[0]).toEqual({
      role: 'user',
      parts: [
        { type: 'file', mediaType: 'image/webp', url: 'https://example.test/a.webp' },
        { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' },
      ],
    });
    expect(parsed[2]).toEqual({
      role: 'tool',
      parts: [
        {
          type: 'tool_result',
          callId: 'c1',
          name: 'shot',
          output: 'taken',
          attachments: [
            { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' },
            { type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'r.pdf' },
          ],
        },
      ],
    });
  });

  it('given the opening the render sends for an empty view, then no message: it is the service’s', () => {
    expect(parseOpenAIResponses([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: ANTHROPIC_OPENING_TEXT }] }])).toEqual([]);
  });
});
