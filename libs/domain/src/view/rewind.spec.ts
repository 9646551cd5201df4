import { PRESETS } from '../config';
import { DomainError } from '../errors';
import { StoredEvent } from '../events';
import { planCompaction } from '../compaction/plan';
import { toolExchangesInView } from '../prune/tool-exchanges';
import { errorOf } from '../testing/expect-domain-error';
import { viewAt } from './model-view';
import { assertRewindable, withoutRewound } from './rewind';
import { assistant, call, pinned, result, rewound, storeEvents, TEST_MODEL, tool, usage, user } from './testing/events';

const at = (events: StoredEvent[], atSeq = events.length) =>
  viewAt(events, atSeq, { model: TEST_MODEL, options: { pending: 'abort', contextBudgetTokens: 60_000 } });
const texts = (events: StoredEvent[], atSeq?: number) =>
  at(events, atSeq).messages.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : p.type === 'tool_result' ? `result:${p.output}` : p.type)).join(' '));

describe('rewind: the view after a session.rewound', () => {
  // seq 1 user, 2 assistant, 3 user, 4 assistant, 5 rewound to 2
  const log = () => storeEvents([user('u1', 'first'), assistant('a1', 'one'), user('u2', 'second'), assistant('a2', 'two'), rewound(2)]);

  it('no longer shows what clients appended after toSeq; later turns show', () => {
    // given a rewind to seq 2, then a new user turn
    const events = storeEvents([user('u1', 'first'), assistant('a1', 'one'), user('u2', 'second'), assistant('a2', 'two'), rewound(2), user('u3', 'again')]);
    // when the view is read at the head
    // then the turns in (2, 5) are gone and the one after the rewind follows the kept ones
    expect(texts(events)).toEqual(['first', 'one', 'again']);
  });

  it('keeps them in the log and in every view before the rewind (atSeq)', () => {
    // given the rewound log
    const events = log();
    // when read at seq 4 (before the rewind) and at the head
    // then the earlier view still shows them, and withoutRewound drops them from the head's reading only
    expect(texts(events, 4)).toEqual(['first', 'one', 'second', 'two']);
    expect(texts(events)).toEqual(['first', 'one']);
    expect(events).toHaveLength(5);
    expect(withoutRewound(events).map((e) => e.seq)).toEqual([1, 2, 5]);
  });

  it("leaves the service's own events in the range in force: a pin added there stays", () => {
    // given a pin added after toSeq, then a rewind over it
    const events = storeEvents([user('u1', 'first'), pinned('p1', 'use pnpm'), user('u2', 'second'), rewound(1)]);
    // when / then the turn is gone, the pin is not
    const view = at(events);
    expect(view.messages.some((m) => m.parts.some((p) => p.type === 'text' && p.text.includes('use pnpm')))).toBe(true);
    expect(view.messages.some((m) => m.parts.some((p) => p.type === 'text' && p.text === 'second'))).toBe(false);
  });

  it("a call whose result was rewound is pending again (aborted in the view until answered)", () => {
    // given a call at seq 2 answered at seq 3, rewound to 2
    const events = storeEvents([user('u1', 'ls'), assistant('a1', call('c1', 'bash')), tool('t1', result('c1', 'a b')), rewound(2)]);
    // when the view is read
    const view = at(events);
    // then the call is pending and the old result is not shown
    expect(view.pendingToolCalls).toEqual([{ callId: 'c1', name: 'bash' }]);
    expect(texts(events).some((t) => t.includes('result:a b'))).toBe(false);
  });

  it("a step measured in the rewound range no longer measures the view: the figure is the estimate", () => {
    // given a step whose usage (900 tokens) measured turns that were then rewound
    const events = storeEvents([user('u1', 'first'), assistant('a1', 'one'), user('u2', 'second'), usage(900, 10, {}, 3), rewound(2)]);
    // when / then the figure is no longer usage-based
    expect(at(events).tokens.basis).toBe('estimate');
    // and before the rewind it was
    expect(at(events, 4).tokens).toMatchObject({ basis: 'usage+estimate', usageTokens: 910 });
  });

  it('a second rewind into an already rewound range hides nothing more; rewound turns stay rewound', () => {
    // given rewinds to 2 (at 5) and then to 3 (at 7), with a turn in between
    const events = storeEvents([user('u1', 'first'), assistant('a1', 'one'), user('u2', 'second'), assistant('a2', 'two'), rewound(2), user('u3', 'third'), rewound(3)]);
    // when / then the first rewind's turns stay gone and the turn after it is gone too
    expect(texts(events)).toEqual(['first', 'one']);
  });

  it('is neither summarized nor kept by a compaction plan, nor pruned', () => {
    // given a rewound turn holding a large tool result
    const big = 'x'.repeat(40_000);
    const events = storeEvents([
      user('u1', 'first'),
      assistant('a1', call('c1', 'bash')),
      tool('t1', result('c1', big)),
      assistant('a2', 'done'),
      rewound(1),
      user('u2', 'again'),
    ]);
    // when a compaction is planned at the head and prune candidates are listed
    const plan = planCompaction({ events, pivot: null, markerSeq: events.length, config: PRESETS['spec-000'].compaction, usable: 100_000 });
    // then neither sees the rewound turn: the plan holds the two user turns only, and there is nothing to prune
    if (plan.kind !== 'plan') throw new Error(`expected a plan, got ${plan.reason}`);
    expect([...plan.sourceHead, ...plan.keptMessages].map((m) => m.parts.map((p) => p.type).join())).toEqual(['text', 'text']);
    expect(toolExchangesInView(events)).toEqual([]);
    // while before the rewind both would
    expect(toolExchangesInView(events.slice(0, 4)).map((exchange) => exchange.result.callId)).toEqual(['c1']);
  });
});

describe('assertRewindable', () => {
  it('accepts a seq from 1 up to below the head, at or after the pivot', () => {
    expect(() => assertRewindable({ toSeq: 1, headSeq: 5, coveredThroughSeq: 0 })).not.toThrow();
    expect(() => assertRewindable({ toSeq: 4, headSeq: 5, coveredThroughSeq: 4 })).not.toThrow();
  });

  it.each([
    ['0', 0],
    ['the head', 5],
    ['past the head', 9],
    ['a fraction', 2.5],
  ])('refuses %s as toSeq (400 invalid_rewind_seq)', (_, toSeq) => {
    const error = errorOf(() => assertRewindable({ toSeq, headSeq: 5, coveredThroughSeq: 0 }));
    expect([error.kind, error.code]).toEqual(['invalid', 'invalid_rewind_seq']);
  });

  it('refuses a seq inside the compacted range (409 rewind_behind_pivot), naming the first seq it may take', () => {
    // given a pivot that summarized through seq 6
    // when rewinding to 3
    const error: DomainError = errorOf(() => assertRewindable({ toSeq: 3, headSeq: 9, coveredThroughSeq: 6 }));
    // then
    expect([error.kind, error.code, error.details]).toEqual(['conflict', 'rewind_behind_pivot', { toSeq: 3, coveredThroughSeq: 6 }]);
  });
});
