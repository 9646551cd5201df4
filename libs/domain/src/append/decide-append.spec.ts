import { payloadHash } from '../canonical-hash';
import { markerEvent } from '../compaction';
import { invalid } from '../errors';
import { NewEvent, Part, Role } from '../events';
import { eventTokens } from '../session-view';
import { given } from '../testing/given';
import { AppendCommand, AppendState, appendRows, decideAppend } from './decide-append';

const MODEL = 'gpt-4o';
const message = (id: string, role: Role, ...parts: Part[]): NewEvent => ({ id, type: 'message.added', data: { message: { id, role, parts } } });
const text = (t: string): Part => ({ type: 'text', text: t });
const call = (callId: string): Part => ({ type: 'tool_call', callId, name: 'bash', input: { cmd: 'ls' } });
const result = (callId: string): Part => ({ type: 'tool_result', callId, name: '', output: 'a.ts' });
const step: NewEvent = { id: 'step-1', type: 'step.finished', data: { usage: { input_tokens: 10, output_tokens: 2 } } };

const session = (over: Partial<AppendState> = {}): AppendState => ({
  sessionId: 's1',
  headSeq: 4,
  model: MODEL,
  archived: false,
  stored: [],
  knownCalls: [],
  ...over,
});
const batch = (events: NewEvent[], over: Partial<AppendCommand> = {}): AppendCommand => ({ events, hashes: events.map(payloadHash), quotas: false, ...over });
/** An import's batch: the events with the seqs they carry, from `from`. */
const imported = (events: NewEvent[], from: number) => batch(events, { mode: 'import', seqs: events.map((_, i) => from + i) });
const stored = (event: NewEvent, seq: number) => ({ id: event.id, seq, payloadHash: payloadHash(event) });
/** The decision reduced to what a rule is about. */
const outcome = (command: AppendCommand) => (state: AppendState) => {
  const decision = decideAppend(state, command);
  return decision.kind === 'replay' ? decision : { kind: decision.kind, response: decision.response };
};

const hello = message('m1', 'user', text('hello'));
const reply = message('m2', 'assistant', text('hi'));

describe('decideAppend', () => {
  describe('rule 1, replay of a committed batch', () => {
    it('answers the original seqs with 200 and writes nothing when every id is stored with the same body', () => {
      given(session({ headSeq: 6, stored: [stored(reply, 6), stored(hello, 5)] }))
        .when(outcome(batch([hello, reply])))
        .then({ kind: 'replay', response: { status: 200, body: { headSeq: 6, events: [{ id: 'm1', seq: 5 }, { id: 'm2', seq: 6 }] } } });
    });

    it('refuses an id stored with another body (422 event_id_reused)', () => {
      given(session({ stored: [stored(message('m1', 'user', text('another')), 3)] }))
        .when(outcome(batch([hello])))
        .thenFails('event_id_reused', { eventId: 'm1', seq: 3 });
    });

    it('refuses a batch mixing stored and new ids (409 partial_duplicate)', () => {
      given(session({ stored: [stored(hello, 3)] }))
        .when(outcome(batch([hello, reply])))
        .thenFails('partial_duplicate', { storedIds: ['m1'] });
    });

    it('an import replays nothing: an id the session holds, even with the same body, is 400 duplicate_event_id naming the event', () => {
      given(session({ headSeq: 4, stored: [stored(reply, 3)] }))
        .when(outcome(imported([hello, reply], 5)))
        .thenFails('duplicate_event_id', { path: '$.events[1].id' });
    });

    it('an import names each id once in its batch (400 duplicate_event_id)', () => {
      given(session()).when(outcome(imported([hello, hello], 5))).thenFails('duplicate_event_id', { path: '$.events[1].id' });
    });

    it('comes before every other rule: a replay on an archived session, past its expectedSeq, is still a replay', () => {
      const check = () => {
        throw invalid('refused', 'the use case refuses');
      };
      given(session({ archived: true, headSeq: 9, stored: [stored(hello, 5)] }))
        .when((state) => decideAppend(state, batch([hello], { expectedSeq: 4, check })).kind)
        .then('replay');
    });
  });

  describe('rule 2, archived', () => {
    it('refuses a new batch on an archived session (409 session_archived), before expectedSeq', () => {
      given(session({ archived: true }))
        .when(outcome(batch([hello], { expectedSeq: 0 })))
        .thenFails('session_archived');
    });

    it("writes upkeep's results (a compaction's, a prune's) to an archived session", () => {
      given(session({ archived: true }))
        .when((state) => decideAppend(state, batch([hello], { mode: 'upkeep' })).kind)
        .then('write');
    });
  });

  describe('rule 3, expectedSeq', () => {
    it('refuses a batch whose expectedSeq is not the head (409 version_conflict with the head)', () => {
      given(session({ headSeq: 4 }))
        .when(outcome(batch([hello], { expectedSeq: 3 })))
        .thenFails('version_conflict', { expectedSeq: 3, headSeq: 4 });
    });

    it('accepts a batch whose expectedSeq is the head', () => {
      given(session({ headSeq: 4 }))
        .when((state) => decideAppend(state, batch([hello], { expectedSeq: 4 })).kind)
        .then('write');
    });

    it("an import's seqs follow the head: a gap or an overlap is 400 event_out_of_order naming the event", () => {
      given(session({ headSeq: 4 })).when(outcome(imported([hello, reply], 6))).thenFails('event_out_of_order', { path: '$.events[0].seq' });
      given(session({ headSeq: 4 }))
        .when(outcome(batch([hello, reply], { mode: 'import', seqs: [5, 5] })))
        .thenFails('event_out_of_order', { path: '$.events[1].seq' });
    });

    it('writes an import whose seqs are head+1.. at those seqs', () => {
      given(session({ headSeq: 4 }))
        .when((state) => {
          const decision = decideAppend(state, imported([hello, reply], 5));
          return decision.kind === 'write' && decision.response;
        })
        .then({ status: 201, body: { headSeq: 6, events: [{ id: 'm1', seq: 5 }, { id: 'm2', seq: 6 }] } });
    });
  });

  describe("rule 4, the use case's own check", () => {
    const refuse = () => {
      throw invalid('pin_budget_exceeded', 'over the budget');
    };

    it('refuses the batch with its error', () => {
      given(session()).when(outcome(batch([hello], { check: refuse }))).thenFails('pin_budget_exceeded');
    });

    it('runs after expectedSeq: a stale batch is a version conflict, whatever the check says', () => {
      given(session()).when(outcome(batch([hello], { expectedSeq: 1, check: refuse }))).thenFails('version_conflict');
    });

    it('runs before the ledger: its refusal wins over a call issued twice', () => {
      given(session({ knownCalls: [{ callId: 'c1', name: 'bash', answered: false }] }))
        .when(outcome(batch([message('m3', 'assistant', call('c1'))], { check: refuse })))
        .thenFails('pin_budget_exceeded');
    });
  });

  describe('rule 5, tool-call ledger pairing', () => {
    it('records calls issued and answered at their events’ seqs', () => {
      const events = [message('m3', 'assistant', call('c1'), call('c2')), message('m4', 'tool', result('c0')), message('m5', 'tool', result('c1'))];
      given(session({ knownCalls: [{ callId: 'c0', name: 'bash', answered: false }] }))
        .when((state) => {
          const decision = decideAppend(state, batch(events));
          return decision.kind === 'write' && decision.ledger;
        })
        .then({
          issued: [
            { callId: 'c1', name: 'bash', seq: 5 },
            { callId: 'c2', name: 'bash', seq: 5 },
          ],
          answered: [
            { callId: 'c0', seq: 6 },
            { callId: 'c1', seq: 7 },
          ],
        });
    });

    it('refuses a call id the session issued already (400 duplicate_tool_call_id)', () => {
      given(session({ knownCalls: [{ callId: 'c1', name: 'bash', answered: true }] }))
        .when(outcome(batch([message('m3', 'assistant', call('c1'))])))
        .thenFails('duplicate_tool_call_id');
    });

    it('refuses a result for a call never issued (400 unknown_tool_call)', () => {
      given(session()).when(outcome(batch([message('m3', 'tool', result('c9'))]))).thenFails('unknown_tool_call');
    });

    it("holds for an import: a call its log issued twice is 400 duplicate_tool_call_id naming the event", () => {
      given(session({ knownCalls: [{ callId: 'c1', name: 'bash', answered: true }] }))
        .when(outcome(imported([hello, message('m3', 'assistant', call('c1'))], 5)))
        .thenFails('duplicate_tool_call_id', { path: '$.events[1].data.message.parts[0].callId' });
    });
  });

  describe('rule 6, rows', () => {
    it('writes the events at head+1.. with their payload hashes as sent and token estimates for the session’s model', () => {
      const events = [hello, reply];
      given(session({ headSeq: 4 }))
        .when((state) => {
          const decision = decideAppend(state, batch(events));
          return decision.kind === 'write' && { firstSeq: decision.firstSeq, rows: decision.rows, response: decision.response };
        })
        .then({
          firstSeq: 5,
          rows: events.map((event) => ({ event, payloadHash: payloadHash(event), tokens: eventTokens(event, MODEL) })),
          response: { status: 201, body: { headSeq: 6, events: [{ id: 'm1', seq: 5 }, { id: 'm2', seq: 6 }] } },
        });
    });

    it('takes rows built beforehand for the session’s model as they are, and builds them again for another model', () => {
      const prebuilt = (model: string) => ({ model, rows: [{ event: hello, payloadHash: payloadHash(hello), tokens: 999 }] });
      const rowsOf = (command: AppendCommand) => (state: AppendState) => {
        const decision = decideAppend(state, command);
        return decision.kind === 'write' && decision.rows?.map((row) => row.tokens);
      };
      given(session()).when(rowsOf(batch([hello], { prebuilt: prebuilt(MODEL) }))).then([999]);
      given(session()).when(rowsOf(batch([hello], { prebuilt: prebuilt('another-model') }))).then([eventTokens(hello, MODEL)]);
    });

    it('leaves the rows of a batch with tool results to the tool-output step (appendRows on its views)', () => {
      given(session({ knownCalls: [{ callId: 'c1', name: 'bash', answered: false }] }))
        .when((state) => {
          const decision = decideAppend(state, batch([message('m3', 'tool', result('c1'))]));
          return decision.kind === 'write' && decision.rows;
        })
        .then(null);
    });

    it("writes an import's events with tool results as they come (their outputs are stored or inline already)", () => {
      const answer = message('m3', 'tool', { type: 'tool_result', callId: 'c1', name: 'bash', output: 'a.ts' });
      given(session({ knownCalls: [{ callId: 'c1', name: 'bash', answered: false }] }))
        .when((state) => {
          const decision = decideAppend(state, imported([answer], 5));
          return decision.kind === 'write' && decision.rows;
        })
        .then([{ event: answer, payloadHash: payloadHash(answer), tokens: eventTokens(answer, MODEL) }]);
    });

    it('refuses an imported event whose data is not what the service writes for its type (400 invalid_log)', () => {
      const malformed = { id: 'p1', type: 'pin.added', data: {} } as unknown as NewEvent;
      given(session()).when(outcome(imported([hello, malformed], 5))).thenFails('invalid_log');
    });

    it('appendRows: tokens of the view written, the hash of the event sent', () => {
      const sent = message('m3', 'tool', result('c1'));
      const view = message('m3', 'tool', { type: 'tool_result', callId: 'c1', name: 'bash', output: 'a' });
      expect(appendRows([view], [sent], [payloadHash(sent)], MODEL)).toEqual([{ event: view, payloadHash: payloadHash(sent), tokens: eventTokens(view, MODEL) }]);
    });
  });

  describe('rule 7, after the write', () => {
    const afterWrite = (command: AppendCommand) => (state: AppendState) => {
      const decision = decideAppend(state, command);
      return decision.kind === 'write' && decision.afterWrite;
    };

    it('evaluates the compaction trigger only for a batch holding a trigger type', () => {
      given(session()).when(afterWrite(batch([hello]))).then({ compactionTrigger: true, pruneScheduling: false, quotaCheck: false });
      given(session())
        .when(afterWrite(batch([{ id: 'x', type: 'session.config_changed', data: { patch: {} } }])))
        .then({ compactionTrigger: false, pruneScheduling: false, quotaCheck: false });
    });

    it('schedules prune after a step, with the trigger', () => {
      given(session()).when(afterWrite(batch([hello, step]))).then({ compactionTrigger: true, pruneScheduling: true, quotaCheck: false });
    });

    it('evaluates the trigger for a marker the batch holds (which enqueues its job)', () => {
      given(session({ headSeq: 4 }))
        .when(afterWrite(batch([markerEvent(5, 'manual')])))
        .then({ compactionTrigger: true, pruneScheduling: false, quotaCheck: false });
    });

    it('checks the quotas last, when the tenant has one', () => {
      given(session()).when(afterWrite(batch([hello], { quotas: true }))).then({ compactionTrigger: true, pruneScheduling: false, quotaCheck: true });
    });

    it('triggers nothing after an import (its log holds its own markers), but checks the quotas', () => {
      given(session())
        .when(afterWrite({ ...imported([hello, step, markerEvent(7, 'manual')], 5), quotas: true }))
        .then({ compactionTrigger: false, pruneScheduling: false, quotaCheck: true });
    });
  });
});
