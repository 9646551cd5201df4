// A type-only import, in a spec: proves our request shape compiles against the SDK the clients use.
// eslint-disable-next-line no-restricted-imports
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { FilePart } from '../../events';
import { ABORTED_TOOL_RESULT } from '../../placeholders';
import { assistant, call, msg, result, system, text, tool, user, viewOf } from '../testing/events';
import { validateOpenAIChatMessages } from '../validate';
import { ANTHROPIC_OPENING_TEXT } from './anthropic';
import { renderOpenAIChat } from './openai-chat';

const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };

describe('renderOpenAIChat', () => {
  it('puts the system prompt first, calls as tool_calls with JSON arguments, one tool message per result', () => {
    const view = viewOf(
      [
        user('u1', 'list and count'),
        assistant('a1', 'on it', call('c1', 'ls', { dir: '/' }), call('c2', 'wc', { file: 'x' })),
        tool('t1', result('c1', 'a b'), result('c2', '2')),
        assistant('a2', 'two files'),
      ],
      { system: 'be brief' },
    );
    // Typed as the SDK's request param: the shape compiles against the real client.
    const messages: ChatCompletionMessageParam[] = renderOpenAIChat(view);
    expect(messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list and count' },
      {
        role: 'assistant',
        content: 'on it',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"dir":"/"}' } },
          { id: 'c2', type: 'function', function: { name: 'wc', arguments: '{"file":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a b' },
      { role: 'tool', tool_call_id: 'c2', content: '2' },
      { role: 'assistant', content: 'two files' },
    ]);
    expect(validateOpenAIChatMessages(messages)).toEqual([]);
  });

  it('sends content null for a call-only turn and omits reasoning', () => {
    const view = viewOf([user('u1', 'go'), assistant('a1', { type: 'reasoning', text: 'hmm' }, call('c1')), tool('t1', result('c1'))]);
    expect(renderOpenAIChat(view)[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"c1"}' } }],
    });
  });

  it('drops a reasoning-only assistant message', () => {
    const view = viewOf([user('u1', 'go'), assistant('a1', { type: 'reasoning', text: 'hmm' })]);
    expect(renderOpenAIChat(view)).toEqual([{ role: 'user', content: 'go' }]);
  });

  it('sends images as image_url parts and keeps mid-conversation system messages', () => {
    const view = viewOf([{ type: 'message.added', data: { message: msg('u1', 'user', [text('what is this?'), image]) } }, system('s1', 'reminder')]);
    expect(renderOpenAIChat(view)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } },
        ],
      },
      { role: 'system', content: 'reminder' },
    ]);
  });

  it('moves result attachments into a user message after the turn’s tool messages', () => {
    const view = viewOf([
      assistant('a1', call('c1'), call('c2')),
      tool('t1', result('c1', 'screenshot taken', { attachments: [image] }), result('c2')),
    ]);
    const messages = renderOpenAIChat(view);
    expect(messages.slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'screenshot taken' },
      { role: 'tool', tool_call_id: 'c2', content: 'output of c2' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '[attachments of tool call c1]' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,aGVsbG8=' } },
        ],
      },
    ]);
    expect(validateOpenAIChatMessages(messages)).toEqual([]);
  });

  it('never sends an empty messages array: an empty view opens with one user message', () => {
    const messages = renderOpenAIChat(viewOf([user('u1', ''), assistant('a1', { type: 'reasoning', text: 'hmm' })]));
    expect(messages).toEqual([{ role: 'user', content: ANTHROPIC_OPENING_TEXT }]);
    expect(validateOpenAIChatMessages(messages)).toEqual([]);
    // A system prompt alone is a valid request.
    expect(renderOpenAIChat(viewOf([], { system: 'sys' }))).toEqual([{ role: 'system', content: 'sys' }]);
  });

  it('answers a dangling call with the synthetic aborted result', () => {
    const messages = renderOpenAIChat(viewOf([assistant('a1', call('c1')), user('u1', 'stop')]));
    expect(messages[1]).toEqual({ role: 'tool', tool_call_id: 'c1', content: ABORTED_TOOL_RESULT });
    expect(validateOpenAIChatMessages(messages)).toEqual([]);
  });
});
