/**
 * Quiet windows: given the heads a session commits / when each comes /
 * then which of them call for action (a search notice, an index run).
 */
import { QuietWindows } from './session-heads';

describe('QuietWindows', () => {
  const head = (sessionId: string) => ({ tenantId: 't1', sessionId });

  it('given a burst of heads of one session, then the first is due and the rest of the window is quiet', () => {
    let now = 0;
    const throttle = new QuietWindows(1000, () => now);
    const due = [0, 10, 500, 999, 1000, 1500, 2000].map((t) => ((now = t), throttle.due(head('s1'))));
    expect(due).toEqual([true, false, false, false, true, false, true]);
  });

  it('given heads of two sessions, then each has its own window', () => {
    let now = 0;
    const throttle = new QuietWindows(1000, () => now);
    expect([throttle.due(head('a')), throttle.due(head('b')), throttle.due(head('a'))]).toEqual([true, true, false]);
    now = 1000;
    expect([throttle.due(head('b')), throttle.due({ tenantId: 't2', sessionId: 'a' })]).toEqual([true, true]);
  });

  it('given a session forgotten inside its window, then its next head is due', () => {
    const windows = new QuietWindows(1000, () => 0);
    expect(windows.due(head('a'))).toBe(true);
    windows.forget(head('a'));
    expect([windows.due(head('a')), windows.due(head('a'))]).toEqual([true, false]);
  });

  it('given a window of 0, then every head is due', () => {
    const throttle = new QuietWindows(0, () => 5);
    expect([throttle.due(head('a')), throttle.due(head('a'))]).toEqual([true, true]);
  });

  it('given more sessions than it remembers, then the oldest is forgotten and its next head is due again', () => {
    const throttle = new QuietWindows(1000, () => 0, 2);
    expect(['a', 'b', 'c'].map((s) => throttle.due(head(s)))).toEqual([true, true, true]);
    expect([throttle.due(head('c')), throttle.due(head('a'))]).toEqual([false, true]);
  });
});
