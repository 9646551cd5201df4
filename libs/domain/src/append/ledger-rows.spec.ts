import { ledgerRows, openCallsAfter } from './ledger-rows';

describe('ledgerRows', () => {
  it('writes a call answered in its own batch answered at once, and the answers to earlier calls apart', () => {
    // given a batch issuing c1 (answered at seq 4) and c2, and answering c0 of an earlier batch at seq 5
    const ledger = {
      issued: [
        { callId: 'c1', name: 'bash', seq: 3 },
        { callId: 'c2', name: 'grep', seq: 3 },
      ],
      answered: [
        { callId: 'c1', seq: 4 },
        { callId: 'c0', seq: 5 },
      ],
    };
    // when / then
    expect(ledgerRows(ledger)).toEqual({
      calls: [
        { callId: 'c1', name: 'bash', seq: 3, answeredSeq: 4 },
        { callId: 'c2', name: 'grep', seq: 3, answeredSeq: null },
      ],
      answers: [{ callId: 'c0', seq: 5 }],
    });
  });
});

describe('openCallsAfter', () => {
  it('opens the issued calls, closes the answered ones, and drops the oldest beyond the limit', () => {
    // given c0 and c1 open
    const open = new Map([
      ['c0', 'bash'],
      ['c1', 'grep'],
    ]);
    // when a write issues c2 and c3 and answers c1, with room for two
    const next = openCallsAfter(open, { issued: [{ callId: 'c2', name: 'read', seq: 7 }, { callId: 'c3', name: 'read', seq: 7 }], answered: [{ callId: 'c1', seq: 8 }] }, 2);
    // then
    expect([...next]).toEqual([
      ['c2', 'read'],
      ['c3', 'read'],
    ]);
    expect([...open.keys()]).toEqual(['c0', 'c1']);
  });
});
