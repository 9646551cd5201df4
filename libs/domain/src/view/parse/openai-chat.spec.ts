import { ANTHROPIC_OPENING_TEXT, attachmentsHeader, OpenAIChatMessage } from '../render';
import { parseOpenAIChat } from './openai-chat';

describe('parseOpenAIChat', () => {
  it('given a tool turn, then system, user, the assistant text and call, and the result named as its call, with no ids', () => {
    // given
    const messages: OpenAIChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list' },
      { role: 'assistant', content: 'listing', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"dir":"/"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'a b' },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ];
    // when
    const parsed = parseOpenAIChat(messages);
    // then
    expect(parsed).toEqual([
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', text: 'list' }] },
      { role: 'assistant', parts: [{ type: 'text', text: 'listing' }, { type: 'tool_call', callId: 'c1', name: 'ls', input: { dir: '/' } }] },
      { role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'ls', output: 'a b' }] },
      { role: 'assistant', parts: [{ type: 'text', text: 'done' }] },
    ]);
  });

  it('given parallel results and the attachments message after them, then one tool message with the files on their results', () => {
    // given
    const messages: OpenAIChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'pdf', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'taken' },
      { role: 'tool', tool_call_id: 'c2', content: 'fetched' },
      {
        role: 'user',
        content: [
          { type: 'text', text: attachmentsHeader('c1') },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } },
          { type: 'text', text: attachmentsHeader('c2') },
          { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'and this?' }, { type: 'image_url', image_url: { url: 'https://example.test/a.JPG?v=2' } }] },
    ];
    // when
    const parsed = parseOpenAIChat(messages);
    // then
    expect(parsed.slice(1)).toEqual([
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'c1', name: 'shot', output: 'taken', attachments: [{ type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' }] },
          {
            type: 'tool_result',
            callId: 'c2',
            name: 'pdf',
            output: 'fetched',
            attachments: [{ type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=', filename: 'spec.pdf' }],
          },
        ],
      },
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'and this?' },
          // A URL's media type is not in the format: read from its extension.
          { type: 'file', mediaType: 'image/jpeg', url: 'https://example.test/a.JPG?v=2' },
        ],
      },
    ]);
  });

  it('given a result whose call was sent earlier and malformed arguments, then no name (the append takes the call’s) and the raw string', () => {
    // given
    const messages: OpenAIChatMessage[] = [
      { role: 'tool', tool_call_id: 'c0', content: 'late' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"dir":' } }] },
    ];
    // when
    const parsed = parseOpenAIChat(messages);
    // then
    expect(parsed).toEqual([
      { role: 'tool', parts: [{ type: 'tool_result', callId: 'c0', output: 'late' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'ls', input: '{"dir":' }] },
    ]);
  });

  it('given the opening the render sends for an empty view, then no message: it is the service’s', () => {
    expect(parseOpenAIChat([{ role: 'user', content: ANTHROPIC_OPENING_TEXT }])).toEqual([]);
  });
});
