import { NewEvent, Part, Role } from './events';
import { applyToolCallLedger, assumedOpenCalls, hasToolResults, KnownToolCall, referencedCallIds } from './tool-call-ledger';
import { errorOf } from './testing/expect-domain-error';
import { given } from './testing/given';

let n = 0;
const message = (role: Role, ...parts: Part[]): NewEvent => {
  const id = `e${++n}`;
  return { id, type: 'message.added', data: { message: { id, role, parts } } };
};
const call = (callId: string, name = 'read_file'): Part => ({ type: 'tool_call', callId, name, input: { path: 'a.ts' } });
const result = (callId: string, name = ''): Part => ({ type: 'tool_result', callId, name, output: 'ok' });
const text = (t: string): Part => ({ type: 'text', text: t });
const step: NewEvent = { id: 'step', type: 'step.finished', data: { usage: { input_tokens: 1, output_tokens: 1 } } };

describe('hasToolResults', () => {
  it('is true only for a batch with a tool result, not for calls alone', () => {
    expect(hasToolResults([message('user', text('go')), message('assistant', call('c1')), step])).toBe(false);
    expect(hasToolResults([message('assistant', call('c1')), message('tool', result('c1'))])).toBe(true);
  });
});

describe('referencedCallIds', () => {
  it('lists each call id mentioned by calls or results once, ignoring other events and parts', () => {
    // given
    const events = [message('user', text('go')), message('assistant', call('c1'), call('c2')), step, message('tool', result('c1'), result('c3'))];
    // when / then
    expect(referencedCallIds(events)).toEqual(['c1', 'c2', 'c3']);
  });

  it('is empty for a batch without tool parts', () => {
    expect(referencedCallIds([message('user', text('hi')), step])).toEqual([]);
  });
});

describe('assumedOpenCalls', () => {
  it('assumes open each call the batch answers without issuing it, named by its result or else by what the caller saw issued', () => {
    // given a batch issuing c1 and answering it, and answering c2 (named) and c3 (unnamed, seen issued as grep)
    const events = [message('assistant', call('c1')), message('tool', result('c1'), result('c2', 'bash'), result('c3'))];
    // when
    const assumed = assumedOpenCalls(events, (callId) => (callId === 'c3' ? 'grep' : undefined));
    // then
    expect(assumed).toEqual([
      { callId: 'c2', name: 'bash', answered: false },
      { callId: 'c3', name: 'grep', answered: false },
    ]);
  });

  it('assumes nothing when an unnamed result answers a call the caller did not see: only the ledger has its name', () => {
    expect(assumedOpenCalls([message('tool', result('c9'))], () => undefined)).toBeUndefined();
  });

  it('assumes nothing for a batch that answers only its own calls', () => {
    expect(assumedOpenCalls([message('assistant', call('c1'), call('c2')), message('tool', result('c1'), result('c2'))], () => undefined)).toEqual([]);
  });
});

describe('applyToolCallLedger', () => {
  it('records calls issued and answered within one batch, with the answering event index', () => {
    // given an empty session
    const events = [message('assistant', call('c1'), call('c2')), message('tool', result('c1')), message('tool', result('c2'))];
    // when
    const changes = applyToolCallLedger(events, []);
    // then
    expect(changes).toEqual({
      issued: [
        { callId: 'c1', name: 'read_file', eventIndex: 0 },
        { callId: 'c2', name: 'read_file', eventIndex: 0 },
      ],
      answered: [
        { callId: 'c1', eventIndex: 1 },
        { callId: 'c2', eventIndex: 2 },
      ],
    });
  });

  it('answers a call issued by an earlier batch and fills the missing tool name from it', () => {
    // given c1 (grep) stored and unanswered
    const known: KnownToolCall[] = [{ callId: 'c1', name: 'grep', answered: false }];
    const answer = message('tool', result('c1'));
    // when
    const changes = applyToolCallLedger([answer], known);
    // then
    expect(changes).toEqual({ issued: [], answered: [{ callId: 'c1', eventIndex: 0 }] });
    expect(answer.type === 'message.added' && answer.data.message.parts[0]).toMatchObject({ name: 'grep' });
  });

  it('keeps a tool name the client gave', () => {
    const answer = message('tool', result('c1', 'client_name'));
    applyToolCallLedger([answer], [{ callId: 'c1', name: 'grep', answered: false }]);
    expect(answer.type === 'message.added' && answer.data.message.parts[0]).toMatchObject({ name: 'client_name' });
  });

  const noCalls: KnownToolCall[] = [];

  it('refuses a call id issued twice in one message', () => {
    given(noCalls)
      .when((known) => applyToolCallLedger([message('assistant', call('c1'), call('c1'))], known))
      .thenFails('duplicate_tool_call_id', { path: '$.events[0].data.message.parts[1].callId' });
    expect(errorOf(() => applyToolCallLedger([message('assistant', call('c1'), call('c1'))], [])).kind).toBe('invalid');
  });

  it('refuses a call id issued twice across events of one batch', () => {
    given(noCalls)
      .when((known) => applyToolCallLedger([message('assistant', call('c1')), message('assistant', call('c1'))], known))
      .thenFails('duplicate_tool_call_id', { path: '$.events[1].data.message.parts[0].callId' });
  });

  it.each([false, true])('refuses a call id already issued by an earlier batch (answered: %s)', (answered) => {
    given<KnownToolCall[]>([{ callId: 'c1', name: 'x', answered }])
      .when((known) => applyToolCallLedger([message('assistant', call('c1'))], known))
      .thenFails('duplicate_tool_call_id');
  });

  it('refuses a result whose call was never issued', () => {
    given(noCalls)
      .when((known) => applyToolCallLedger([message('tool', result('ghost'))], known))
      .thenFails('unknown_tool_call', { path: '$.events[0].data.message.parts[0].callId' });
  });

  it('refuses a result that comes before its call in the batch', () => {
    given(noCalls)
      .when((known) => applyToolCallLedger([message('tool', result('c1')), message('assistant', call('c1'))], known))
      .thenFails('unknown_tool_call');
  });

  it('refuses a second result for a call answered in an earlier batch', () => {
    given<KnownToolCall[]>([{ callId: 'c1', name: 'x', answered: true }])
      .when((known) => applyToolCallLedger([message('tool', result('c1'))], known))
      .thenFails('duplicate_tool_result');
  });

  it('refuses a second result for a call answered earlier in the same batch', () => {
    const events = [message('assistant', call('c1')), message('tool', result('c1')), message('tool', result('c1'))];
    const error = errorOf(() => applyToolCallLedger(events, []));
    expect(error.code).toBe('duplicate_tool_result');
    expect(error.details).toEqual({ path: '$.events[2].data.message.parts[0].callId' });
  });

  it('does not mutate the known calls it is given', () => {
    // given
    const known: KnownToolCall[] = [{ callId: 'c1', name: 'x', answered: false }];
    // when
    applyToolCallLedger([message('tool', result('c1'))], known);
    // then the caller's view of the store is unchanged
    expect(known).toEqual([{ callId: 'c1', name: 'x', answered: false }]);
  });

  it('ignores events other than messages', () => {
    expect(applyToolCallLedger([step], [])).toEqual({ issued: [], answered: [] });
  });
});
