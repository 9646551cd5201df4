import type { NewEvent } from '../events';
import { pivotMovedBy } from './pivot';

type Appended = Pick<NewEvent, 'type' | 'data'>;

const message: Appended = { type: 'message.added', data: { message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'go on' }] } } };
// Only coveredThroughSeq matters to the rule; the rest of the event's data is left out.
const completed = (coveredThroughSeq: number) => ({ type: 'compaction.completed', data: { coveredThroughSeq } }) as Appended;

describe('how an append moves the pivot', () => {
  it('given a batch without a completed compaction, when it is appended, then the pivot stays where it is', () => {
    expect(pivotMovedBy([message, message])).toBeNull();
    expect(pivotMovedBy([])).toBeNull();
  });

  it('given a completed compaction second in the batch, when it is appended, then it is the pivot (head + 2) and the read starts after what it covers', () => {
    expect(pivotMovedBy([message, completed(40), message])).toEqual({ offset: 2, coveredThroughSeq: 40 });
  });

  it('given two completed compactions in one batch, when it is appended, then the last one is the pivot', () => {
    expect(pivotMovedBy([completed(10), message, completed(30)])).toEqual({ offset: 3, coveredThroughSeq: 30 });
  });
});
