import { estimateMessageTokens } from '../tokens';
import { prunedPlaceholder } from '../placeholders';
import { viewAt } from './model-view';
import { viewTokenBound } from './tokens';
import {
  archived,
  assistant,
  call,
  compacted,
  EventDraft,
  msg,
  pruned,
  result,
  storeEvents,
  text,
  TEST_MODEL,
  tool,
  usage,
  user,
  viewOf,
} from './testing/events';

const options = { contextBudgetTokens: 60_000 };
const storedTokens = (drafts: EventDraft[]) => storeEvents(drafts).reduce((sum, event) => sum + event.tokens, 0);

/** The view's own estimate of these events, without any usage: what a trusted usage must be near. */
const estimateOf = (drafts: EventDraft[]) => viewOf(drafts).tokens.estimated;

describe('view tokens', () => {
  const conversation = [user('u1', 'x'.repeat(400)), assistant('a1', 'y'.repeat(200))];

  it('without usage, estimates the whole view: system prompt plus stored message estimates', () => {
    const view = viewOf(conversation, { system: 'z'.repeat(40) });
    expect(view.tokens).toEqual({ estimated: 160, basis: 'estimate', usageSeq: null, usageTokens: 0, estimatedTokens: 160, wholeEstimate: 160, overhead: 0, expectedGrowth: 0, ignoredUsage: null });
  });

  it("takes the caller's system prompt estimate when given", () => {
    expect(viewOf(conversation, { system: 'z'.repeat(40), systemTokens: 7 }).tokens.estimated).toBe(157);
  });

  it('is the usage total (input, output and both cache figures) when the usage is the newest thing', () => {
    // The input side (60 + 20 + 30) is 10 over the view the step was sent (u1's 100): that is the overhead.
    const view = viewOf([...conversation, usage(60, 40, { creation: 20, read: 30 })]);
    expect(view.tokens).toEqual({ estimated: 150, basis: 'usage+estimate', usageSeq: 3, usageTokens: 150, estimatedTokens: 0, wholeEstimate: 150, overhead: 10, expectedGrowth: 0, ignoredUsage: null });
  });

  it('adds the stored estimates of every message after the usage', () => {
    const before = [user('u1', 'go '.repeat(100)), assistant('a1', call('c1'))];
    const later = [tool('t1', result('c1', 'w'.repeat(80))), user('u2', 'v'.repeat(40))];
    const view = viewOf([...before, usage(storedTokens(before), 0), ...later]);
    expect(view.tokens.basis).toBe('usage+estimate');
    expect(view.tokens.estimatedTokens).toBe(storedTokens(later));
    expect(view.tokens.estimated).toBe(storedTokens(before) + storedTokens(later));
  });

  it('bounds the figure now and after a rewrite that turns a trusted usage stale: the larger of the figure and the whole estimate plus the overhead', () => {
    const trustedLow = viewOf([...conversation, usage(100, 0)]).tokens;
    expect(trustedLow).toMatchObject({ basis: 'usage+estimate', estimated: 100, wholeEstimate: 150, overhead: 0 });
    expect(viewTokenBound(trustedLow)).toBe(150);
    expect(viewTokenBound(viewOf([...conversation, usage(230, 50)]).tokens)).toBe(280);
  });

  it('uses the stored figure of a logged message instead of re-estimating it', () => {
    const events = storeEvents([user('u1', 'short')]).map((event) => ({ ...event, tokens: 999 }));
    expect(viewAt(events, 1, { model: TEST_MODEL, options }).tokens.estimated).toBe(999);
  });

  describe("given a usage far above the view's own estimate (tool definitions and framing the log never sees)", () => {
    it('when the step spent its output on hidden reasoning, then that is no overhead', () => {
      expect(viewOf([...conversation, usage(100, 30_000)]).tokens).toMatchObject({ estimated: 30_100, overhead: 0 });
    });

    it('when it is the newest step, then it is trusted as is and the difference on the input side is learnt as the overhead', () => {
      // Sent u1 (100 tokens), the provider counted 700 in; the reply (a1, 50) is its output.
      const view = viewOf([...conversation, usage(700, 50)]);
      expect(view.tokens).toMatchObject({ basis: 'usage+estimate', estimated: 750, wholeEstimate: 150, overhead: 600, ignoredUsage: null });
    });

    it('when messages follow it, then the figure is the usage plus their estimates', () => {
      const later = [user('u2', 'v'.repeat(40))];
      expect(viewOf([...conversation, usage(700, 50), ...later]).tokens).toMatchObject({ estimated: 750 + storedTokens(later), overhead: 600 });
    });

    it('when it is below the estimate, then it is trusted too and the overhead is 0', () => {
      expect(viewOf([...conversation, usage(60, 0)]).tokens).toMatchObject({ basis: 'usage+estimate', estimated: 60, overhead: 0 });
    });

    it('when a prune then makes it stale, then the figure is the new estimate plus the overhead learnt on the view as it was measured', () => {
      const window = [assistant('a1', call('c1')), tool('t1', result('c1', 'w'.repeat(4_000)))];
      const measured = storedTokens(window);
      const view = viewOf([...window, usage(measured + 5_000, 0), pruned(['c1'])]);
      const placeholder = estimateMessageTokens(msg('t1', 'tool', [result('c1', prunedPlaceholder())]), TEST_MODEL);
      const estimate = storedTokens([assistant('a1', call('c1'))]) + placeholder;
      expect(view.tokens).toMatchObject({ basis: 'estimate', overhead: 5_000, wholeEstimate: estimate, estimated: estimate + 5_000, ignoredUsage: { reason: 'stale' } });
    });

    it('when a pivot then makes it stale, then the figure is the new estimate plus the overhead the pivot carried', () => {
      const summary = msg('p1', 'user', [text('s'.repeat(40))]);
      const pivot = compacted(2, [summary]);
      (pivot.data as { overhead?: number }).overhead = 4_000;
      const view = viewOf([user('u1', 'x'.repeat(400)), usage(5_000, 100), pivot, user('u2', 'y'.repeat(40))]);
      expect(view.tokens).toMatchObject({ basis: 'estimate', overhead: 4_000, estimated: 10 + 10 + 4_000 });
      expect(viewTokenBound(view.tokens)).toBe(4_020);
    });
  });

  it('distrusts usage reported before the pivot: the prefix replaced what it measured', () => {
    const summary = msg('p1', 'user', [text('s'.repeat(40))]);
    const view = viewOf([user('u1', 'x'.repeat(400)), usage(5_000, 100), compacted(2, [summary]), user('u2', 'y'.repeat(40))]);
    expect(view.tokens).toMatchObject({ basis: 'estimate', estimated: 10 + 10 });
  });

  it('trusts usage reported after the pivot, on a context read after it', () => {
    const summary = msg('p1', 'user', [text('summary '.repeat(20))]);
    const window = [user('u1', 'old'), compacted(1, [summary]), user('u2', 'new '.repeat(20))];
    const view = viewOf([...window, usage(estimateOf(window), 30)]);
    expect(view.tokens).toMatchObject({ basis: 'usage+estimate', estimated: estimateOf(window) + 30, usageSeq: 4 });
  });

  describe('given a step appended after the pivot, with no message of the client between them (a late step.finished)', () => {
    const summary = msg('p1', 'user', [text('summary')]);
    const tail = [user('u1', 'kept turn '.repeat(30)), assistant('a1', 'answer '.repeat(30))];
    const beforePivot = [user('u0', 'old turn '.repeat(400)), ...tail];

    it('when it carries no contextSeq, then it measured the context the client read before the pivot: stale', () => {
      const view = viewOf([...beforePivot, compacted(1, [summary]), assistant('a2', 'late reply'), usage(2_000, 50)]);
      expect(view.tokens).toMatchObject({ basis: 'estimate', ignoredUsage: { seq: 6, reason: 'stale' } });
    });

    it("when the service's auto-continue message came after the pivot, then that is no read of the client either", () => {
      const autoContinue = user('cmp-4-continue', 'Continue.', { userVisible: false, kind: 'auto_continue' });
      const view = viewOf([...beforePivot, compacted(1, [summary]), autoContinue, usage(2_000, 50)]);
      expect(view.tokens.ignoredUsage).toMatchObject({ reason: 'stale' });
    });

    it('when its contextSeq is at or after the pivot, then it measured the new context: trusted', () => {
      const window = [...beforePivot, compacted(1, [summary])];
      const view = viewOf([...window, usage(estimateOf(window), 0, {}, 4)]);
      expect(view.tokens).toMatchObject({ basis: 'usage+estimate', usageSeq: 5, ignoredUsage: null });
    });

    it('when its contextSeq is before the pivot, then stale even after a message of the client', () => {
      const window = [...beforePivot, compacted(1, [summary]), user('u2', 'more')];
      expect(viewOf([...window, usage(estimateOf(window), 0, {}, 3)]).tokens.ignoredUsage).toMatchObject({ reason: 'stale' });
    });
  });

  it('distrusts usage reported before a prune, and estimates placeholders now', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1', 'w'.repeat(4_000))), usage(5_000, 10), pruned(['c1'])]);
    const placeholder = estimateMessageTokens(msg('t1', 'tool', [result('c1', prunedPlaceholder())]), TEST_MODEL);
    const overhead = 5_000 - storedTokens([assistant('a1', call('c1')), tool('t1', result('c1', 'w'.repeat(4_000)))]);
    expect(view.tokens).toMatchObject({ basis: 'estimate', wholeEstimate: storedTokens([assistant('a1', call('c1'))]) + placeholder, overhead });
  });

  it('distrusts usage reported before an archive', () => {
    const pair = [assistant('a1', call('c1')), tool('t1', result('c1'))];
    const view = viewOf([...pair, usage(5_000, 10), archived(['c1'], null)]);
    expect(view.tokens).toMatchObject({ basis: 'estimate', wholeEstimate: 0, overhead: 5_000 - storedTokens(pair), estimated: 5_000 - storedTokens(pair) });
  });

  it('trusts usage measured after the latest prune', () => {
    const window = [assistant('a1', call('c1')), tool('t1', result('c1')), pruned(['c1']), user('u2', 'next')];
    expect(viewOf([...window, usage(estimateOf(window), 10)]).tokens).toMatchObject({ basis: 'usage+estimate', estimated: estimateOf(window) + 10 });
  });
});

describe('the expected growth of the next step', () => {
  const cycle = (n: number, size: number): EventDraft[] => [assistant(`a${n}`, call(`c${n}`)), tool(`t${n}`, result(`c${n}`, 'r'.repeat(size)))];

  it('given fewer than two steps, then none is expected', () => {
    expect(viewOf([user('u1', 'go'), ...cycle(1, 400), usage(500, 10)]).tokens.expectedGrowth).toBe(0);
  });

  it("given two steps, then it is what was appended between them, the second step's own messages included", () => {
    const between = [...cycle(2, 4_000), assistant('a3', 'done with the second file')];
    const view = viewOf([user('u1', 'go'), ...cycle(1, 400), usage(500, 10), ...between, usage(1_600, 10), user('u2', 'next')]);
    expect(view.tokens.expectedGrowth).toBe(storedTokens(between));
  });
});
