import { AiSdkRequest, ANTHROPIC_OPENING_TEXT } from '../render';
import { parseAiSdk } from './ai-sdk';

describe('parseAiSdk', () => {
  it('given a tool turn with reasoning, then reasoning, text and calls in order, results with their tool names and error flags', () => {
    // given
    const request: AiSdkRequest = {
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'look first' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'ls', input: { dir: '/' } },
            { type: 'text', text: 'and' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'ls', input: { dir: '/x' } },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'c1', toolName: 'ls', output: { type: 'text', value: 'a b' } },
            { type: 'tool-result', toolCallId: 'c2', toolName: 'ls', output: { type: 'error-text', value: 'no such dir' } },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nmind the quota\n</system-reminder>' }] },
      ],
    };
    // when
    const parsed = parseAiSdk(request);
    // then
    expect(parsed).toEqual([
      { role: 'system', parts: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', text: 'list' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', text: 'look first' },
          { type: 'tool_call', callId: 'c1', name: 'ls', input: { dir: '/' } },
          { type: 'text', text: 'and' },
          { type: 'tool_call', callId: 'c2', name: 'ls', input: { dir: '/x' } },
        ],
      },
      {
        role: 'tool',
        parts: [
          { type: 'tool_result', callId: 'c1', name: 'ls', output: 'a b' },
          { type: 'tool_result', callId: 'c2', name: 'ls', output: 'no such dir', isError: true },
        ],
      },
      { role: 'system', parts: [{ type: 'text', text: 'mind the quota' }] },
    ]);
  });

  it('given file data as base64 and as URLs, then data or url as the SDK reads them, filenames kept; result content back to output and files', () => {
    // given
    const request: AiSdkRequest = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'shot', input: {} }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'shot',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'taken' },
                  { type: 'file-data', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' },
                  { type: 'file-url', url: 'https://example.test/spec.pdf', mediaType: 'application/pdf' },
                  { type: 'text', text: '[file: log.txt]' },
                ],
              },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'a.png' },
            { type: 'file', mediaType: 'application/pdf', data: 'https://example.test/spec.pdf' },
          ],
        },
      ],
    };
    // when
    const parsed = parseAiSdk(request);
    // then: the opening is the service's and is dropped; the note for a file the render could not send too
    expect(parsed.map((message) => message.role)).toEqual(['assistant', 'tool', 'user']);
    expect(parsed[1].parts).toEqual([
      {
        type: 'tool_result',
        callId: 'c1',
        name: 'shot',
        output: 'taken',
        attachments: [
          { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' },
          { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' },
        ],
      },
    ]);
    expect(parsed[2].parts).toEqual([
      { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'a.png' },
      { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' },
    ]);
  });
});
