import { ANTHROPIC_OPENING_TEXT, AnthropicRequest } from '../render';
import { parseAnthropic } from './anthropic';

describe('parseAnthropic', () => {
  it('given a cached request, then the system prompt as a system message, each turn split where its blocks change kind, no breakpoints', () => {
    // given: a user turn holding the results, a system reminder and the user's next text
    const request: AnthropicRequest = {
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'listing' },
            { type: 'tool_use', id: 'c1', name: 'ls', input: { dir: '/' } },
            { type: 'tool_use', id: 'c2', name: 'cat', input: { input: 'x' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: 'a b' },
            { type: 'tool_result', tool_use_id: 'c2', is_error: true },
            { type: 'text', text: '<system-reminder>\nmind the quota\n</system-reminder>' },
            { type: 'text', text: 'go on', cache_control: { type: 'ephemeral', ttl: '1h' } },
          ],
        },
      ],
    };
    // when
    const parsed = parseAnthropic(request);
    // then
    expect(parsed).toEqual([
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', text: 'list' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'listing' },
          { type: 'tool_call', callId: 'c1', name: 'ls', input: { dir: '/' } },
          // Whether the input was `{input: 'x'}` or `'x'` the format cannot say: it stays as sent.
          { type: 'tool_call', callId: 'c2', name: 'cat', input: { input: 'x' } },
        ],
      },
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'c1', name: 'ls', output: 'a b' },
          { type: 'tool_result', callId: 'c2', name: 'cat', output: '', isError: true },
        ],
      },
      { role: 'system', parts: [{ type: 'text', text: 'mind the quota' }] },
      { role: 'user', parts: [{ type: 'text', text: 'go on' }] },
    ]);
  });

  it('given media in a user turn and a result, then files: base64 with its type, a URL typed by its extension or as a PDF', () => {
    // given
    const request: AnthropicRequest = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: 'https://example.test/a.gif' } },
            { type: 'document', source: { type: 'url', url: 'https://example.test/spec' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'shot', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'c1',
              content: [
                { type: 'text', text: 'taken' },
                { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'aGVsbG8=' } },
              ],
            },
          ],
        },
      ],
    };
    // when
    const parsed = parseAnthropic(request);
    // then
    expect(parsed[0].parts).toEqual([
      { type: 'file', mediaType: 'image/gif', url: 'https://example.test/a.gif' },
      { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec' },
    ]);
    expect(parsed[2].parts).toEqual([
      { type: 'tool_result', callId: 'c1', name: 'shot', output: 'taken', attachments: [{ type: 'file', mediaType: 'image/webp', data: 'aGVsbG8=' }] },
    ]);
  });

  it('given the opening before an assistant-first view, then it is dropped; a reminder before any message stays user text', () => {
    // given: with nothing before it, a system message would be the system prompt's and render there
    const request: AnthropicRequest = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] },
        { role: 'assistant', content: [{ type: 'text', text: 'I was working on it' }] },
      ],
    };
    const leading: AnthropicRequest = { messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>\nx\n</system-reminder>' }] }] };
    // when / then
    expect(parseAnthropic(request)).toEqual([{ role: 'assistant', parts: [{ type: 'text', text: 'I was working on it' }] }]);
    expect(parseAnthropic(leading)).toEqual([{ role: 'user', parts: [{ type: 'text', text: '<system-reminder>\nx\n</system-reminder>' }] }]);
  });
});
