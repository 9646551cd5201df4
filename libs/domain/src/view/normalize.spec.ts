import { Message } from '../events';
import { ABORTED_TOOL_RESULT } from '../placeholders';
import { aborted, assistant, call, msg, result, text, tool, usage, user, viewOf } from './testing/events';

const abortedResult = (callId: string, name = 'bash') => ({
  type: 'tool_result',
  callId,
  name,
  output: ABORTED_TOOL_RESULT,
  isError: true,
});
/** Each message as `id: part, part` with calls `c1()`, results `c1=output` and text as is. */
const shape = (messages: Message[]) =>
  messages.map(
    (m) =>
      `${m.id}: ` +
      m.parts
        .map((p) => (p.type === 'tool_call' ? `${p.callId}()` : p.type === 'tool_result' ? `${p.callId}=${p.output}` : 'text' in p ? p.text : p.type))
        .join(', '),
  );

describe('pair normalization', () => {
  it("reproduces Codex's vector: [call c1, output c2, call t1, call s1]", () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c2')), assistant('a2', call('t1')), assistant('a3', call('s1'))]);
    expect(shape(view.messages)).toEqual([
      'a1: c1()',
      'aborted-c1: c1=aborted',
      'a2: t1()',
      'aborted-t1: t1=aborted',
      'a3: s1()',
      'aborted-s1: s1=aborted',
    ]);
    expect(view.repairs).toEqual({ abortedCallIds: ['c1', 't1', 's1'], droppedResultCallIds: ['c2'], droppedCallIds: [] });
  });

  it('gives the synthetic result the call name, the aborted text and isError', () => {
    const view = viewOf([assistant('a1', call('c1', 'read')), user('u1', 'never mind')]);
    expect(view.messages[1]).toEqual({ id: 'aborted-c1', role: 'tool', parts: [abortedResult('c1', 'read')], metadata: { kind: 'synthetic' } });
  });

  it('moves a result to directly follow its call', () => {
    const view = viewOf([assistant('a1', call('c1')), user('u1', 'hurry up'), tool('t1', result('c1', 'done'))]);
    expect(shape(view.messages)).toEqual(['a1: c1()', 't1: c1=done', 'u1: hurry up']);
  });

  it('puts results in call order, keeping the tool message id', () => {
    const view = viewOf([assistant('a1', call('c1'), call('c2')), tool('t1', result('c2', 'two'), result('c1', 'one'))]);
    expect(shape(view.messages)).toEqual(['a1: c1(), c2()', 't1: c1=one, c2=two']);
  });

  it('splits a tool message answering two assistant messages, suffixing the repeated id', () => {
    const view = viewOf([assistant('a1', call('c1')), assistant('a2', call('c2')), tool('t1', result('c1'), result('c2'))]);
    expect(shape(view.messages)).toEqual(['a1: c1()', 't1: c1=output of c1', 'a2: c2()', 't1#2: c2=output of c2']);
  });

  it('drops orphan results, and tool messages left empty', () => {
    const view = viewOf([user('u1', 'hi'), tool('t1', result('ghost'))]);
    expect(shape(view.messages)).toEqual(['u1: hi']);
    expect(view.repairs.droppedResultCallIds).toEqual(['ghost']);
  });

  it('keeps the first of duplicate call ids and drops later calls and extra results', () => {
    const view = viewOf([
      assistant('a1', call('c1')),
      tool('t1', result('c1', 'first')),
      assistant('a2', call('c1'), call('c3')),
      tool('t2', result('c1', 'second'), result('c3', 'three')),
    ]);
    expect(shape(view.messages)).toEqual(['a1: c1()', 't1: c1=first', 'a2: c3()', 't2: c3=three']);
    expect(view.repairs.droppedCallIds).toEqual(['c1']);
    expect(view.repairs.droppedResultCallIds).toEqual(['c1']);
  });

  it('drops a tool call outside an assistant message', () => {
    const view = viewOf([{ type: 'message.added', data: { message: msg('u1', 'user', [text('hi'), call('c1')]) } }]);
    expect(shape(view.messages)).toEqual(['u1: hi']);
  });
});

describe('pending tool calls', () => {
  const trailing = [user('u1', 'list files'), assistant('a1', 'checking', call('c1', 'ls'), call('c2', 'pwd'))];

  it('reports the calls of a trailing assistant message without results', () => {
    expect(viewOf(trailing).pendingToolCalls).toEqual([
      { callId: 'c1', name: 'ls' },
      { callId: 'c2', name: 'pwd' },
    ]);
  });

  it('abort (default): answers them with the synthetic result', () => {
    expect(shape(viewOf(trailing).messages)).toEqual(['u1: list files', 'a1: checking, c1(), c2()', 'aborted-c1: c1=aborted, c2=aborted']);
  });

  it('omit: leaves the calls out and keeps the rest of the message', () => {
    expect(shape(viewOf(trailing, { pending: 'omit' }).messages)).toEqual(['u1: list files', 'a1: checking']);
  });

  it('omit: drops a message left with no parts', () => {
    const view = viewOf([user('u1', 'go'), assistant('a1', call('c1'))], { pending: 'omit' });
    expect(shape(view.messages)).toEqual(['u1: go']);
  });

  it('treats the unanswered rest of a partly answered trailing turn as pending', () => {
    const view = viewOf([...trailing, tool('t1', result('c1', 'a b'))], { pending: 'omit' });
    expect(view.pendingToolCalls).toEqual([{ callId: 'c2', name: 'pwd' }]);
    expect(shape(view.messages)).toEqual(['u1: list files', 'a1: checking, c1()', 't1: c1=a b']);
  });

  it('stays pending after the step is reported', () => {
    expect(viewOf([...trailing, usage(100, 20)]).pendingToolCalls).toHaveLength(2);
  });

  it('is aborted, not pending, once turn.aborted follows', () => {
    const view = viewOf([...trailing, aborted()], { pending: 'omit' });
    expect(view.pendingToolCalls).toEqual([]);
    expect(shape(view.messages)).toEqual(['u1: list files', 'a1: checking, c1(), c2()', 'aborted-c1: c1=aborted, c2=aborted']);
  });

  it('is aborted, not pending, once another message follows', () => {
    expect(viewOf([...trailing, user('u2', 'stop')]).pendingToolCalls).toEqual([]);
  });
});
