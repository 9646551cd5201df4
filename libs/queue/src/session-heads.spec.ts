/**
 * Search notices: given the heads a session commits / when each is
 * published / then which of them the search indexer hears.
 */
import { SearchNoticeThrottle } from './session-heads';

describe('SearchNoticeThrottle', () => {
  const head = (sessionId: string) => ({ tenantId: 't1', sessionId });

  it('given a burst of heads of one session, then the first is due and the rest of the window is quiet', () => {
    let now = 0;
    const throttle = new SearchNoticeThrottle(1000, () => now);
    const due = [0, 10, 500, 999, 1000, 1500, 2000].map((t) => ((now = t), throttle.due(head('s1'))));
    expect(due).toEqual([true, false, false, false, true, false, true]);
  });

  it('given heads of two sessions, then each has its own window', () => {
    let now = 0;
    const throttle = new SearchNoticeThrottle(1000, () => now);
    expect([throttle.due(head('a')), throttle.due(head('b')), throttle.due(head('a'))]).toEqual([true, true, false]);
    now = 1000;
    expect([throttle.due(head('b')), throttle.due({ tenantId: 't2', sessionId: 'a' })]).toEqual([true, true]);
  });

  it('given a window of 0, then every head is due', () => {
    const throttle = new SearchNoticeThrottle(0, () => 5);
    expect([throttle.due(head('a')), throttle.due(head('a'))]).toEqual([true, true]);
  });

  it('given more sessions than it remembers, then the oldest is forgotten and its next head is due again', () => {
    const throttle = new SearchNoticeThrottle(1000, () => 0, 2);
    expect(['a', 'b', 'c'].map((s) => throttle.due(head(s)))).toEqual([true, true, true]);
    expect([throttle.due(head('c')), throttle.due(head('a'))]).toEqual([false, true]);
  });
});
