import { FilePart } from '../events';
import { CLEARED_TOOL_INPUT, prunedPlaceholder } from '../placeholders';
import {
  archived,
  assistant,
  call,
  hidden,
  msg,
  pruned,
  result,
  text,
  tool,
  usage,
  user,
  viewOf,
} from './testing/events';

const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };
const ref = { id: 'ref-1', byte_size: 2_048, line_count: 40 };
const ids = (view: { messages: Array<{ id: string }> }) => view.messages.map((m) => m.id);

describe('fold: events to messages', () => {
  it('takes messages only from message.added, in log order', () => {
    const view = viewOf([
      { type: 'session.created', data: { model: 'm', config: {}, metadata: {} } },
      user('u1', 'hi'),
      { type: 'compaction.requested', data: { auto: false, reason: 'manual' } },
      assistant('a1', 'hello'),
      usage(10, 5),
      user('u2', 'bye'),
    ]);
    expect(ids(view)).toEqual(['u1', 'a1', 'u2']);
  });

  it('hides agentVisible=false messages; unset or userVisible=false stay visible to the model', () => {
    const view = viewOf([
      user('u1', 'shown'),
      hidden(msg('u2', 'user', [text('hidden')])),
      user('u3', 'for the agent only', { userVisible: false }),
      user('u4', 'explicit', { agentVisible: true }),
    ]);
    expect(ids(view)).toEqual(['u1', 'u3', 'u4']);
  });
});

describe('fold: tool_outputs.pruned', () => {
  it('renders pruned results as the placeholder with their ref and drops attachments', () => {
    const view = viewOf([
      assistant('a1', call('c1')),
      tool('t1', result('c1', 'long output', { outputRef: ref, attachments: [image] })),
      pruned(['c1']),
    ]);
    expect(view.messages[1].parts).toEqual([
      { type: 'tool_result', callId: 'c1', name: 'bash', output: prunedPlaceholder('ref-1'), outputRef: ref },
    ]);
    expect(view.messages[0].parts).toEqual([call('c1')]);
  });

  it('uses the placeholder without ref when the output has none', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1')), pruned(['c1'])]);
    expect(view.messages[1].parts).toEqual([result('c1', '[Old tool result content cleared]')]);
  });

  it('clears the call input too when the prune says clearInputs', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1')), pruned(['c1'], true)]);
    expect(view.messages[0].parts).toEqual([{ ...call('c1'), input: CLEARED_TOOL_INPUT }]);
  });

  it('leaves the other results of a tool message untouched', () => {
    const view = viewOf([assistant('a1', call('c1'), call('c2')), tool('t1', result('c1'), result('c2')), pruned(['c2'])]);
    expect(view.messages[1].parts).toEqual([result('c1'), result('c2', prunedPlaceholder())]);
  });
});

describe('fold: tool_results.archived', () => {
  it('removes the pair and shows the digest at the archive position', () => {
    const digest = msg('d1', 'user', [text('digest: c1 listed 3 files')]);
    const view = viewOf([
      user('u1', 'go'),
      assistant('a1', call('c1')),
      tool('t1', result('c1')),
      assistant('a2', 'done'),
      archived(['c1'], digest),
      user('u2', 'next'),
    ]);
    expect(ids(view)).toEqual(['u1', 'a2', 'd1', 'u2']);
  });

  it('keeps an assistant message that still has other parts, and other results', () => {
    const view = viewOf([
      assistant('a1', 'let me look', call('c1'), call('c2')),
      tool('t1', result('c1'), result('c2')),
      archived(['c1'], null),
    ]);
    expect(view.messages.map((m) => m.parts)).toEqual([[text('let me look'), call('c2')], [result('c2')]]);
  });

  it('hides a digest marked agentVisible=false', () => {
    const digest = msg('d1', 'user', [text('for the user')], { agentVisible: false });
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1')), archived(['c1'], digest)]);
    expect(view.messages).toEqual([]);
  });
});
