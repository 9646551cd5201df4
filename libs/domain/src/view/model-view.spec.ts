import { buildModelView, latestPivot, viewAt } from './model-view';
import { renderNeutral } from './render';
import { assistant, call, compacted, msg, result, storeEvents, text, TEST_MODEL, tool, user } from './testing/events';

const options = { contextBudgetTokens: 60_000 };
const summary = msg('p1', 'user', [text('summary: the user wants X')]);
const ids = (messages: Array<{ id: string }>) => messages.map((m) => m.id);

describe('model view: pivot and window', () => {
  const drafts = [
    user('u1', 'old'), //                  seq 1
    assistant('a1', 'old answer'), //      seq 2
    user('u2', 'kept'), //                 seq 3: appended while compaction ran
    compacted(2, [summary]), //            seq 4
    user('u3', 'new'), //                  seq 5
  ];
  const log = storeEvents(drafts);

  it('is the system prompt, the pivot prefix, then the events after coveredThroughSeq', () => {
    const view = buildModelView({ system: 'be brief', pivot: latestPivot(log), events: log.slice(2), model: TEST_MODEL, options });
    expect(ids(renderNeutral(view))).toEqual(['system', 'p1', 'u2', 'u3']);
    expect(view.pivotSeq).toBe(4);
    expect(view.coveredThroughSeq).toBe(2);
  });

  it("leaves a client's records out of the view", () => {
    // given a record between two messages
    const withRecord = storeEvents([user('u1', 'hi'), { type: 'record.added', data: { kind: 'checkpoint', value: { step: 1 } } }, assistant('a1', 'hello')]);
    // when
    const view = buildModelView({ pivot: null, events: withRecord, model: TEST_MODEL, options });
    // then
    expect(ids(view.messages)).toEqual(['u1', 'a1']);
  });

  it('ignores covered events even when they are passed', () => {
    const view = buildModelView({ pivot: latestPivot(log), events: log, model: TEST_MODEL, options });
    expect(ids(view.messages)).toEqual(['p1', 'u2', 'u3']);
  });

  it('uses the newest pivot', () => {
    const later = storeEvents([...drafts, compacted(5, [msg('p2', 'user', [text('newer summary')])]), user('u4', 'latest')]);
    expect(latestPivot(later)?.seq).toBe(6);
    expect(ids(viewAt(later, later.length, { model: TEST_MODEL, options }).messages)).toEqual(['p2', 'u4']);
  });

  it('normalizes pairs across the prefix boundary: a window result whose call was compacted is dropped', () => {
    const events = storeEvents([assistant('a1', call('c1')), compacted(1, [summary]), tool('t1', result('c1'))]);
    const view = viewAt(events, events.length, { model: TEST_MODEL, options });
    expect(ids(view.messages)).toEqual(['p1']);
    expect(view.repairs.droppedResultCallIds).toEqual(['c1']);
  });
});

describe('model view: atSeq', () => {
  const log = storeEvents([user('u1', 'a'), compacted(1, [summary]), user('u2', 'b'), user('u3', 'c')]);

  it('finds the latest pivot at or before atSeq', () => {
    expect(latestPivot(log, 1)).toBeNull();
    expect(latestPivot(log, 2)?.seq).toBe(2);
    expect(latestPivot(log)?.seq).toBe(2);
  });

  it('shows the view as it was at atSeq', () => {
    expect(ids(viewAt(log, 1, { model: TEST_MODEL, options }).messages)).toEqual(['u1']);
    expect(ids(viewAt(log, 3, { model: TEST_MODEL, options }).messages)).toEqual(['p1', 'u2']);
    expect(viewAt(log, 0, { model: TEST_MODEL, options }).messages).toEqual([]);
  });
});
