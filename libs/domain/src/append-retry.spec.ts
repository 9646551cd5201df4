import { classifyAppendRetry, ExistingEventMatch, versionConflict } from './append-retry';
import { DomainError } from './errors';
import { errorOf } from './testing/expect-domain-error';

const stored = (id: string, seq: number, sameBody = true): ExistingEventMatch => ({ id, seq, sameBody });

/** EventStoreDB's idempotency matrix (reliability notes T1.3), one row per case. */
describe('classifyAppendRetry', () => {
  it('a batch of unseen ids is new', () => {
    // given no stored event shares an id with the batch
    // when
    const outcome = classifyAppendRetry(['e1', 'e2'], []);
    // then
    expect(outcome).toEqual({ kind: 'new' });
  });

  it('a batch whose every id is stored with the same body replays the original seqs, in batch order', () => {
    // given e1..e3 stored at 7..9, found by the store in another order
    const existing = [stored('e3', 9), stored('e1', 7), stored('e2', 8)];
    // when the same batch is retried
    const outcome = classifyAppendRetry(['e1', 'e2', 'e3'], existing);
    // then
    expect(outcome).toEqual({
      kind: 'replay',
      events: [
        { id: 'e1', seq: 7 },
        { id: 'e2', seq: 8 },
        { id: 'e3', seq: 9 },
      ],
    });
  });

  it('an id stored with another body is 422 event_id_reused, naming the id and its seq', () => {
    // given e2 stored with a different payload
    const existing = [stored('e1', 4), stored('e2', 5, false)];
    // when
    const error = errorOf(() => classifyAppendRetry(['e1', 'e2'], existing));
    // then
    expect(error.kind).toBe('unprocessable');
    expect(error.code).toBe('event_id_reused');
    expect(error.details).toEqual({ eventId: 'e2', seq: 5 });
  });

  it('a body mismatch wins over a partial duplicate (the client must learn it reused an id)', () => {
    const error = errorOf(() => classifyAppendRetry(['e1', 'new'], [stored('e1', 2, false)]));
    expect(error.code).toBe('event_id_reused');
  });

  it('a batch mixing stored and new ids is a 409 partial_duplicate listing the stored ones', () => {
    // given the first two events of a three-event batch are stored
    const existing = [stored('e1', 2), stored('e2', 3)];
    // when the batch grows a new event on retry
    const error = errorOf(() => classifyAppendRetry(['e1', 'e2', 'e3'], existing));
    // then
    expect(error.kind).toBe('conflict');
    expect(error.code).toBe('partial_duplicate');
    expect(error.details).toEqual({ storedIds: ['e1', 'e2'] });
  });

  it('a prefix of a stored batch replays just that prefix', () => {
    // given e1, e2 stored; the retry only carries e1
    const outcome = classifyAppendRetry(['e1'], [stored('e1', 2)]);
    // then
    expect(outcome).toEqual({ kind: 'replay', events: [{ id: 'e1', seq: 2 }] });
  });
});

describe('versionConflict', () => {
  it('is a 409 version_conflict carrying both the expected and the actual head', () => {
    const error = versionConflict(3, 5);
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe('conflict');
    expect(error.code).toBe('version_conflict');
    expect(error.details).toEqual({ expectedSeq: 3, headSeq: 5 });
    expect(error.message).toContain('5');
  });
});
