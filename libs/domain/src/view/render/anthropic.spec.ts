// A type-only import, in a spec: proves our request shape compiles against the SDK the clients use.
// eslint-disable-next-line no-restricted-imports
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { FilePart } from '../../events';
import { ABORTED_TOOL_RESULT } from '../../placeholders';
import { assistant, call, compacted, msg, result, system, text, tool, user, viewOf } from '../testing/events';
import { validateAnthropicRequest } from '../validate';
import { ANTHROPIC_OPENING_TEXT, renderAnthropic } from './anthropic';

const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };

describe('renderAnthropic', () => {
  it('keeps system apart and answers tool_use with tool_result blocks in the next user turn', () => {
    const view = viewOf(
      [user('u1', 'list'), assistant('a1', 'listing', call('c1', 'ls', { dir: '/' })), tool('t1', result('c1', 'a b')), assistant('a2', 'done')],
      { system: 'be brief' },
    );
    const request = renderAnthropic(view);
    // Typed as the SDK's request param: the shape compiles against the real client.
    const messages: MessageParam[] = request.messages;
    expect(request).toEqual({
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'listing' },
            { type: 'tool_use', id: 'c1', name: 'ls', input: { dir: '/' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a b' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      ],
    });
    expect(validateAnthropicRequest({ ...request, messages })).toEqual([]);
  });

  it('merges the results and the following user text into one user turn, results first', () => {
    const request = renderAnthropic(viewOf([user('u1', 'go'), assistant('a1', call('c1')), tool('t1', result('c1')), user('u2', 'and?')]));
    expect(request.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'output of c1' },
        { type: 'text', text: 'and?' },
      ],
    });
    expect(validateAnthropicRequest(request)).toEqual([]);
  });

  it('merges consecutive assistant messages into one turn', () => {
    const request = renderAnthropic(viewOf([user('u1', 'go'), assistant('a1', 'first'), assistant('a2', 'second')]));
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }] },
    ]);
  });

  it('opens with a user turn when the view starts with the assistant', () => {
    const view = viewOf([user('u0', 'old'), compacted(1, [msg('p1', 'assistant', [text('where we were')])]), user('u1', 'continue')]);
    expect(renderAnthropic(view).messages.slice(0, 2)).toEqual([
      { role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] },
      { role: 'assistant', content: [{ type: 'text', text: 'where we were' }] },
    ]);
  });

  it('still sends one user turn for an empty view', () => {
    const request = renderAnthropic(viewOf([], { system: 'sys' }));
    expect(request).toEqual({ system: 'sys', messages: [{ role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_TEXT }] }] });
  });

  it('joins leading system messages to system and wraps later ones as user reminders', () => {
    const request = renderAnthropic(viewOf([system('s1', 'rule one'), user('u1', 'hi'), assistant('a1', 'hello'), system('s2', 'rule two')], { system: 'base' }));
    expect(request.system).toBe('base\n\nrule one');
    expect(request.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<system-reminder>\nrule two\n</system-reminder>' }],
    });
  });

  it('never sends empty or whitespace-only text, nor an emptied message', () => {
    const request = renderAnthropic(viewOf([user('u1', 'hi'), user('u2', '  \n'), assistant('a1', '', { type: 'reasoning', text: 'hmm' }), assistant('a2', 'ok')]));
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ]);
  });

  it('trims trailing whitespace off a final assistant turn (a prefill)', () => {
    const request = renderAnthropic(viewOf([user('u1', 'hi'), assistant('a1', 'hello \n')]));
    expect(request.messages[1].content).toEqual([{ type: 'text', text: 'hello' }]);
  });

  it('wraps non-object tool input and makes odd call ids legal, consistently', () => {
    const request = renderAnthropic(viewOf([user('u1', 'go'), assistant('a1', call('fn.bash:0', 'bash', 'ls -l')), tool('t1', result('fn.bash:0'))]));
    expect(request.messages[1].content).toEqual([{ type: 'tool_use', id: 'fn_bash_0', name: 'bash', input: { input: 'ls -l' } }]);
    expect(request.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'fn_bash_0', content: 'output of fn.bash:0' }]);
  });

  it('marks the synthetic aborted result as an error and sends attachments as image blocks', () => {
    const request = renderAnthropic(
      viewOf([user('u1', 'go'), assistant('a1', call('c1'), call('c2')), tool('t1', result('c2', 'shot', { attachments: [image] })), user('u2', 'next')]),
    );
    expect(request.messages[2].content.slice(0, 2)).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: ABORTED_TOOL_RESULT, is_error: true },
      {
        type: 'tool_result',
        tool_use_id: 'c2',
        content: [
          { type: 'text', text: 'shot' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'aGVsbG8=' } },
        ],
      },
    ]);
    expect(validateAnthropicRequest(request)).toEqual([]);
  });
});
