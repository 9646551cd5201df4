// A type-only import, in a spec: proves our messages compile against the SDK the clients use.
import type { ModelMessage } from 'ai';
import { FilePart } from '../../events';
import { PINNED_CONTEXT_HEADER } from '../../pins/pins';
import { ABORTED_TOOL_RESULT, prunedPlaceholder, trimmedPlaceholder } from '../../placeholders';
import { renderToolOutputTools, TOOL_OUTPUT_READ_TOOL } from '../../tool-output/tools';
import { aiSdkSchemaErrors } from '../testing/ai-sdk-schema';
import { archived, assistant, call, compacted, msg, pinned, pruned, result, system, text, tool, user, viewOf } from '../testing/events';
import { AiSdkMessage, renderAiSdk } from './ai-sdk';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';

const inline: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' };
const linked: FilePart = { type: 'file', mediaType: 'application/pdf', url: 'https://example.test/spec.pdf' };
const ref = (id: string) => ({ id, byte_size: 400, line_count: 1 });

/** Typed as the SDK's own message type with no cast, and accepted by its runtime schema. */
function sdkMessages(messages: AiSdkMessage[]): ModelMessage[] {
  const typed: ModelMessage[] = messages;
  expect(aiSdkSchemaErrors(typed)).toEqual([]);
  return typed;
}

describe('renderAiSdk', () => {
  it('given a tool turn, then system apart, tool-call parts and tool-result messages the SDK accepts', () => {
    // given
    const view = viewOf(
      [
        user('u1', 'list'),
        assistant('a1', { type: 'reasoning', text: 'look first' }, 'listing', call('c1', 'ls', { dir: '/' })),
        tool('t1', result('c1', 'a b')),
        assistant('a2', 'done'),
      ],
      { system: 'be brief' },
    );
    // when
    const request = renderAiSdk(view);
    // then
    expect(request).toEqual({
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'look first' },
            { type: 'text', text: 'listing' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'ls', input: { dir: '/' } },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'ls', output: { type: 'text', value: 'a b' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      ],
    });
    sdkMessages(request.messages);
    // The check is the SDK's: a system message with parts is refused.
    expect(aiSdkSchemaErrors([{ role: 'system', content: [{ type: 'text', text: 'x' }] }])).toHaveLength(1);
  });

  it('given files, then user files as file parts (base64 or URL), assistant files as notes, result media as tool-result content', () => {
    // given
    const view = viewOf([
      { type: 'message.added', data: { message: msg('u1', 'user', [text('what is this?'), inline, linked]) } },
      assistant('a1', 'a sketch', { type: 'file', mediaType: 'image/png', url: 'https://example.test/out.png' }, call('c1'), call('c2')),
      tool('t1', result('c1', 'screenshot taken', { attachments: [inline] }), result('c2', 'fetched', { attachments: [linked] })),
    ]);
    // when
    const { messages } = renderAiSdk(view);
    // then
    expect(messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' },
        { type: 'file', mediaType: 'application/pdf', data: 'https://example.test/spec.pdf' },
      ],
    });
    expect(messages[1].content.slice(0, 2)).toEqual([
      { type: 'text', text: 'a sketch' },
      { type: 'text', text: '[file: image/png https://example.test/out.png]' },
    ]);
    expect(messages[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'bash',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'screenshot taken' },
              { type: 'file-data', mediaType: 'image/png', data: 'aGVsbG8=', filename: 'shot.png' },
            ],
          },
        },
        {
          type: 'tool-result',
          toolCallId: 'c2',
          toolName: 'bash',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'fetched' },
              { type: 'file-url', url: 'https://example.test/spec.pdf', mediaType: 'application/pdf' },
            ],
          },
        },
      ],
    });
    sdkMessages(messages);
  });

  it('given an error result and an unanswered call, then both as error-text, the synthetic one "aborted"', () => {
    // given
    const view = viewOf([
      user('u1', 'go'),
      assistant('a1', call('c1'), call('c2')),
      tool('t1', result('c2', 'exit 1', { isError: true })),
      user('u2', 'next'),
    ]);
    // when
    const { messages } = renderAiSdk(view);
    // then
    expect(messages[2]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'error-text', value: ABORTED_TOOL_RESULT } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'bash', output: { type: 'error-text', value: 'exit 1' } },
      ],
    });
    sdkMessages(messages);
  });

  it('given outputs trimmed by the budget, pruned and archived, then their placeholders with refs as text results', () => {
    // given
    const digest = msg('d1', 'user', [text('digest: c0 listed 3 files')]);
    const view = viewOf(
      [
        user('u1', 'go'),
        assistant('a0', call('c0')),
        tool('t0', result('c0')),
        assistant('a1', call('c1'), call('c2'), call('c3')),
        tool(
          't1',
          result('c1', 'x'.repeat(400), { outputRef: ref('r1') }),
          result('c2', 'y'.repeat(400), { outputRef: ref('r2') }),
          result('c3', 'z'.repeat(400), { outputRef: ref('r3') }),
        ),
        pruned(['c1']),
        archived(['c0'], digest),
      ],
      { contextBudgetTokens: 150 },
    );
    // when
    const { messages } = renderAiSdk(view);
    // then
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(messages[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'digest: c0 listed 3 files' }] });
    expect(messages[2].content.map((part) => (part.type === 'tool-result' ? part.output : null))).toEqual([
      { type: 'text', value: prunedPlaceholder('r1') },
      { type: 'text', value: trimmedPlaceholder('r2') },
      { type: 'text', value: 'z'.repeat(400) },
    ]);
    sdkMessages(messages);
  });

  it('given a pivot with a summary prefix and pins, then the prefix, the pins verbatim, then the window', () => {
    // given
    const view = viewOf(
      [
        user('u1', 'old'),
        pinned('p1', 'Never touch db-prod.'),
        compacted(2, [msg('p', 'user', [text('SUMMARY of the earlier work')])], { pins: [{ pinId: 'p1', text: 'Never touch db-prod.', seq: 2 }] }),
        user('u2', 'continue'),
      ],
      { system: 'sys' },
    );
    // when
    const request = renderAiSdk(view);
    // then
    expect(request).toEqual({
      system: 'sys',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'SUMMARY of the earlier work' }] },
        { role: 'user', content: [{ type: 'text', text: PINNED_CONTEXT_HEADER }, { type: 'text', text: 'Never touch db-prod.' }] },
        { role: 'user', content: [{ type: 'text', text: 'continue' }] },
      ],
    });
    sdkMessages(request.messages);
  });

  it('given pending calls of a trailing turn, then answered "aborted" by default and left out with pending=omit', () => {
    // given
    const drafts = [user('u1', 'go'), assistant('a1', 'checking', call('c1'))];
    // when
    const aborted = renderAiSdk(viewOf(drafts)).messages;
    const omitted = renderAiSdk(viewOf(drafts, { pending: 'omit' })).messages;
    // then
    expect(aborted.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'checking' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { cmd: 'c1' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'error-text', value: ABORTED_TOOL_RESULT } }] },
    ]);
    expect(omitted.slice(1)).toEqual([{ role: 'assistant', content: [{ type: 'text', text: 'checking' }] }]);
    sdkMessages(aborted);
    sdkMessages(omitted);
  });

  it('given system messages, then leading ones join system and later ones become user reminders (the SDK refuses system messages)', () => {
    // when
    const request = renderAiSdk(viewOf([system('s1', 'rule one'), user('u1', 'hi'), assistant('a1', 'hello'), system('s2', 'rule two')], { system: 'base' }));
    // then
    expect(request.system).toBe('base\n\nrule one');
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(request.messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: '<system-reminder>\nrule two\n</system-reminder>' }] });
  });

  it('given a view that is empty or starts with the assistant, then a user turn opens it; blank text and reasoning-only turns are dropped', () => {
    expect(renderAiSdk(viewOf([], { system: 'sys' }))).toEqual({
      system: 'sys',
      messages: [{ role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] }],
    });
    const request = renderAiSdk(viewOf([user('u0', '  \n'), assistant('a0', { type: 'reasoning', text: 'hmm' }), assistant('a1', 'where we were')]));
    expect(request).toEqual({
      messages: [
        { role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] },
        { role: 'assistant', content: [{ type: 'text', text: 'where we were' }] },
      ],
    });
    sdkMessages(request.messages);
  });

  it('given odd call ids and non-object input, then ids every provider accepts, consistently, and object input', () => {
    const { messages } = renderAiSdk(viewOf([user('u1', 'go'), assistant('a1', call('fn.bash:0', 'bash', 'ls -l')), tool('t1', result('fn.bash:0'))]));
    expect(messages[1].content).toEqual([{ type: 'tool-call', toolCallId: 'fn_bash_0', toolName: 'bash', input: { input: 'ls -l' } }]);
    expect(messages[2].content).toEqual([
      { type: 'tool-result', toolCallId: 'fn_bash_0', toolName: 'bash', output: { type: 'text', value: 'output of fn.bash:0' } },
    ]);
  });

  it('gives the tool-output cache tools as name, description and a JSON Schema under inputSchema', () => {
    expect(renderToolOutputTools('ai-sdk')[0]).toEqual({
      name: TOOL_OUTPUT_READ_TOOL,
      description: expect.any(String),
      inputSchema: expect.objectContaining({ type: 'object' }),
    });
  });
});
