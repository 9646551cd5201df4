import { estimateMessageTokens } from '../models';
import { prunedPlaceholder } from '../placeholders';
import { viewAt } from './model-view';
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

describe('view tokens', () => {
  const conversation = [user('u1', 'x'.repeat(400)), assistant('a1', 'y'.repeat(200))];

  it('without usage, estimates the whole view: system prompt plus stored message estimates', () => {
    const view = viewOf(conversation, { system: 'z'.repeat(40) });
    expect(view.tokens).toEqual({ estimated: 10 + 150, basis: 'estimate', usageSeq: null, usageTokens: 0, estimatedTokens: 160 });
  });

  it("takes the caller's system prompt estimate when given", () => {
    expect(viewOf(conversation, { system: 'z'.repeat(40), systemTokens: 7 }).tokens.estimated).toBe(157);
  });

  it('is the usage total when the usage is the newest thing', () => {
    const view = viewOf([...conversation, usage(1_000, 50, { creation: 200, read: 300 })]);
    expect(view.tokens).toEqual({ estimated: 1_550, basis: 'usage+estimate', usageSeq: 3, usageTokens: 1_550, estimatedTokens: 0 });
  });

  it('adds the stored estimates of every message after the usage', () => {
    const later = [tool('t1', result('c1', 'w'.repeat(80))), user('u2', 'v'.repeat(40))];
    const view = viewOf([user('u1', 'go'), assistant('a1', call('c1')), usage(1_000, 50), ...later]);
    expect(view.tokens.basis).toBe('usage+estimate');
    expect(view.tokens.estimatedTokens).toBe(storedTokens(later));
    expect(view.tokens.estimated).toBe(1_050 + storedTokens(later));
  });

  it('uses the stored figure of a logged message instead of re-estimating it', () => {
    const events = storeEvents([user('u1', 'short')]).map((event) => ({ ...event, tokens: 999 }));
    expect(viewAt(events, 1, { model: TEST_MODEL, options }).tokens.estimated).toBe(999);
  });

  it('distrusts usage reported before the pivot: the prefix replaced what it measured', () => {
    const summary = msg('p1', 'user', [text('s'.repeat(40))]);
    const view = viewOf([user('u1', 'x'.repeat(400)), usage(5_000, 100), compacted(2, [summary]), user('u2', 'y'.repeat(40))]);
    expect(view.tokens).toMatchObject({ basis: 'estimate', estimated: 10 + 10 });
  });

  it('trusts usage reported after the pivot', () => {
    const summary = msg('p1', 'user', [text('summary')]);
    const view = viewOf([user('u1', 'old'), compacted(1, [summary]), user('u2', 'new'), usage(700, 30)]);
    expect(view.tokens).toMatchObject({ basis: 'usage+estimate', estimated: 730, usageSeq: 4 });
  });

  it('distrusts usage reported before a prune, and estimates placeholders now', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1', 'w'.repeat(4_000))), usage(5_000, 10), pruned(['c1'])]);
    const placeholder = estimateMessageTokens(msg('t1', 'tool', [result('c1', prunedPlaceholder())]), TEST_MODEL);
    expect(view.tokens.basis).toBe('estimate');
    expect(view.tokens.estimated).toBe(storedTokens([assistant('a1', call('c1'))]) + placeholder);
  });

  it('distrusts usage reported before an archive', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1')), usage(5_000, 10), archived(['c1'], null)]);
    expect(view.tokens).toMatchObject({ basis: 'estimate', estimated: 0 });
  });

  it('trusts usage reported after the latest prune', () => {
    const view = viewOf([assistant('a1', call('c1')), tool('t1', result('c1')), pruned(['c1']), usage(300, 10)]);
    expect(view.tokens).toMatchObject({ basis: 'usage+estimate', estimated: 310 });
  });
});
