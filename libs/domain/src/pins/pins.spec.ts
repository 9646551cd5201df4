/**
 * Pinned context, given events / when the view is read or a
 * compaction runs / then the pins: verbatim right after the pivot's prefix
 * in every format, carried across pivots, never summarized, within budget.
 */
import { PRESETS, resolveSessionConfig } from '../config';
import type { Pin, StoredEvent } from '../events';
import { buildCompletedData } from '../compaction/decide';
import { summarizeHeuristically } from '../compaction/heuristic/heuristic-summarizer';
import { planCompaction } from '../compaction/plan';
import { prefixWithRetention } from '../compaction/fact-retention';
import { eventLog } from '../compaction/testing/event-log';
import { latestPivot, viewAt } from '../view/model-view';
import { CONTEXT_FORMATS, renderAnthropic, renderContext, renderOpenAIChat } from '../view/render';
import { assistant, compacted, msg, pinned, storeEvents, text, TEST_MODEL, unpinned, usage, user, viewOf } from '../view/testing/events';
import { validateAnthropicRequest, validateOpenAIChatMessages } from '../view/validate';
import { assertPinFits, assertPinned, foldPins, PINNED_CONTEXT_HEADER, PINNED_CONTEXT_KIND, pinAddedEvent, pinTokens } from './pins';

const STAGING = 'Staging is db-staging:5432; never touch db-prod.';
const FRIDAY = 'Never run migrations on a Friday.';
const options = { contextBudgetTokens: 60_000 };

describe('foldPins', () => {
  it('given pins added and removed, then the ones in force, oldest first, each with the seq of its pin.added', () => {
    const events = storeEvents([pinned('p1', STAGING), user('u1', 'go'), pinned('p2', FRIDAY), unpinned('p1')]);
    expect(foldPins([], events)).toEqual([{ pinId: 'p2', text: FRIDAY, seq: 3 }]);
  });

  it("given a pivot's pins, then the window's pin events apply on top of them", () => {
    const carried: Pin[] = [{ pinId: 'p1', text: STAGING, seq: 1 }];
    const window = storeEvents([user('u1', 'a'), user('u2', 'b'), pinned('p2', FRIDAY), unpinned('p1')]).slice(2);
    expect(foldPins(carried, window)).toEqual([{ pinId: 'p2', text: FRIDAY, seq: 3 }]);
  });
});

describe('the view with pins', () => {
  const summaryText = 'SUMMARY of the earlier work';
  const drafts = [
    user('u1', 'old request'), //                                  seq 1
    pinned('p1', STAGING), //                                      seq 2
    assistant('a1', 'old answer'), //                              seq 3
    compacted(3, [msg('p', 'user', [text(summaryText)])], { pins: [{ pinId: 'p1', text: STAGING, seq: 2 }] }), // seq 4
    pinned('p2', FRIDAY), //                                       seq 5
    user('u2', 'WINDOW request'), //                               seq 6
  ];
  const events = storeEvents(drafts);
  const view = viewAt(events, events.length, { system: 'SYSTEM prompt', model: TEST_MODEL, options });

  it('when read, then one message right after the prefix: a header and each pin verbatim, not user-visible', () => {
    expect(view.messages.map((m) => m.id)).toEqual(['p', 'pinned-context', 'u2']);
    expect(view.messages[1]).toEqual({
      id: 'pinned-context',
      role: 'user',
      parts: [text(PINNED_CONTEXT_HEADER), text(STAGING), text(FRIDAY)],
      metadata: { kind: PINNED_CONTEXT_KIND, userVisible: false },
    });
  });

  it.each(CONTEXT_FORMATS)('when rendered as %s, then the pins come verbatim after the prefix and before the window', (format) => {
    const rendered = JSON.stringify(renderContext(view, format));
    const at = (needle: string) => rendered.indexOf(JSON.stringify(needle).slice(1, -1));
    expect(at(summaryText)).toBeGreaterThan(-1);
    expect([at(summaryText), at(PINNED_CONTEXT_HEADER), at(STAGING), at(FRIDAY), at('WINDOW request')]).toEqual(
      [...[at(summaryText), at(PINNED_CONTEXT_HEADER), at(STAGING), at(FRIDAY), at('WINDOW request')]].sort((a, b) => a - b),
    );
    expect(at(STAGING)).toBeGreaterThan(at(summaryText));
  });

  it('then the providers accept the context', () => {
    expect(validateAnthropicRequest(renderAnthropic(view))).toEqual([]);
    expect(validateOpenAIChatMessages(renderOpenAIChat(view))).toEqual([]);
  });

  it('without a pivot, then the pins open the conversation', () => {
    expect(viewOf([user('u1', 'hi'), pinned('p1', STAGING)]).messages.map((m) => m.id)).toEqual(['pinned-context', 'u1']);
  });

  it('when a pin is removed, then it is gone from the view; with none left there is no pinned message', () => {
    const removed = storeEvents([...drafts, unpinned('p1'), unpinned('p2')]);
    expect(viewAt(removed, removed.length - 1, { model: TEST_MODEL, options }).messages[1].parts).toEqual([text(PINNED_CONTEXT_HEADER), text(FRIDAY)]);
    expect(viewAt(removed, removed.length, { model: TEST_MODEL, options }).messages.map((m) => m.id)).toEqual(['p', 'u2']);
  });

  it('at an earlier seq, then the pins as they were (time travel)', () => {
    expect(viewAt(events, 1, { model: TEST_MODEL, options }).messages.map((m) => m.id)).toEqual(['u1']);
    expect(viewAt(events, 2, { model: TEST_MODEL, options }).messages[0].parts).toEqual([text(PINNED_CONTEXT_HEADER), text(STAGING)]);
  });

  it('given a usage measured before a pin was added, then the pin is estimated on top of it', () => {
    const base = [user('u1', 'word '.repeat(200))];
    const measured = viewOf(base).tokens.estimated;
    const withPin = viewOf([...base, usage(measured, 0), pinned('p1', STAGING)]);
    expect(withPin.tokens.basis).toBe('usage+estimate');
    expect(withPin.tokens.estimated).toBeGreaterThan(measured);
  });
});

describe('pins across a compaction', () => {
  const { compaction } = resolveSessionConfig('spec-000');

  function session() {
    const log = eventLog();
    log.user('Migrate the billing service to Postgres 16.');
    log.append('pin.added', { pinId: 'p1', text: STAGING });
    log.tool('bash', { input: { command: 'psql -c "select 1"' }, output: 'ok' });
    log.assistant('Connected.').user('Now port the schema.');
    log.assistant('Ported.').user('Run the tests.');
    log.assistant('Tests pass.');
    return log;
  }

  function compact(log: ReturnType<typeof eventLog>) {
    const pivot = latestPivot(log.events);
    const markerSeq = log.marker();
    const plan = planCompaction({ events: log.events, pivot: pivot?.data ?? null, markerSeq, config: compaction, usable: 100_000 });
    if (plan.kind !== 'plan') throw new Error(plan.reason);
    return plan;
  }

  const commit = (log: ReturnType<typeof eventLog>, plan: Extract<ReturnType<typeof compact>, { kind: 'plan' }>) => {
    const heuristic = summarizeHeuristically({ head: plan.sourceHead, previous: plan.previousRecord, budgetTokens: plan.summaryBudgetTokens, strategy: compaction.strategy });
    const checked = prefixWithRetention({ plan, summary: heuristic.summary, retain: null, config: compaction, facts: heuristic.facts });
    const data = buildCompletedData({
      marker: { seq: plan.markerSeq, auto: true, reason: 'threshold' },
      plan,
      strategy: compaction.strategy,
      prefix: checked.prefix,
      summary: checked.summary,
      retain: null,
      model: 'heuristic',
      durationMs: 1,
      record: heuristic.record,
      retention: checked.retention,
    });
    log.append('compaction.completed', data);
    return data;
  };
  const viewOfLog = (events: readonly StoredEvent[]) => viewAt(events, events.length, { model: TEST_MODEL, options });

  it('when the head holding a pin is compacted, then the pivot carries the pin and the next view shows it verbatim, outside the summary', () => {
    const log = session();
    const plan = compact(log);
    expect(plan.pins).toEqual([{ pinId: 'p1', text: STAGING, seq: 2 }]);
    expect(plan.pinsAtCut).toEqual(plan.pins);
    const data = commit(log, plan);
    expect(data.pins).toEqual(plan.pins);
    expect(data.summary).not.toContain(STAGING);
    const pinnedMessage = viewOfLog(log.events).messages.find((m) => m.metadata?.kind === PINNED_CONTEXT_KIND);
    expect(pinnedMessage?.parts).toEqual([text(PINNED_CONTEXT_HEADER), text(STAGING)]);
  });

  it('given ten compactions in a row, then the pin is still there, once, verbatim', () => {
    const log = session();
    for (let round = 1; round <= 10; round++) {
      commit(log, compact(log));
      log.user(`Round ${round}: next step.`).assistant(`Done with round ${round}.`);
    }
    const messages = viewOfLog(log.events).messages;
    expect(messages.filter((m) => JSON.stringify(m).includes(STAGING))).toHaveLength(1);
    expect(messages.find((m) => m.metadata?.kind === PINNED_CONTEXT_KIND)?.parts[1]).toEqual(text(STAGING));
  });

  it('given a pin added and one removed after the cut, then the pivot carries the pins at its cut and the window folds the rest', () => {
    const log = session();
    const markerPlan = compact(log);
    log.append('pin.added', { pinId: 'p2', text: FRIDAY });
    log.append('pin.removed', { pinId: 'p1' });
    const data = commit(log, markerPlan);
    expect(data.pins).toEqual([{ pinId: 'p1', text: STAGING, seq: 2 }]);
    expect(viewOfLog(log.events).messages.find((m) => m.metadata?.kind === PINNED_CONTEXT_KIND)?.parts).toEqual([text(PINNED_CONTEXT_HEADER), text(FRIDAY)]);
  });

  it('then facts a pin holds count as kept: the retention check does not carry them forward again', () => {
    const log = eventLog();
    log.user(`Deploy to ${'db-staging:5432'} only.`);
    log.append('pin.added', { pinId: 'p1', text: 'Deploy to db-staging:5432 only.' });
    log.assistant('Understood.').user('Go on.').assistant('Deployed.');
    const plan = compact(log);
    const heuristic = summarizeHeuristically({ head: plan.sourceHead, budgetTokens: plan.summaryBudgetTokens, strategy: compaction.strategy });
    const withPins = prefixWithRetention({ plan, summary: '', retain: null, config: compaction, facts: heuristic.facts });
    const withoutPins = prefixWithRetention({ plan: { ...plan, pins: [] }, summary: '', retain: null, config: compaction, facts: heuristic.facts });
    expect(withPins.retention.summarizerRatio).toBeGreaterThan(withoutPins.retention.summarizerRatio);
    expect(withPins.summary).not.toContain('db-staging:5432');
    expect(withoutPins.summary).toContain('db-staging:5432');
  });
});

describe('pin rules', () => {
  const model = TEST_MODEL;
  const pins: Pin[] = [{ pinId: 'p1', text: STAGING, seq: 1 }];

  it('given blank text, then a 400', () => {
    expect(() => pinAddedEvent('p2', ' \n ')).toThrow(expect.objectContaining({ kind: 'invalid', code: 'invalid_field' }));
    expect(pinAddedEvent('p2', FRIDAY)).toEqual({ id: 'p2', type: 'pin.added', data: { pinId: 'p2', text: FRIDAY } });
  });

  it('given pins that fit pins.maxTokens exactly, then the pin is accepted; one token more, then 413 pin_budget_exceeded', () => {
    const budget = pinTokens(STAGING, model) + pinTokens(FRIDAY, model);
    expect(() => assertPinFits({ pins, text: FRIDAY, model, maxTokens: budget })).not.toThrow();
    expect(() => assertPinFits({ pins, text: FRIDAY, model, maxTokens: budget - 1 })).toThrow(
      expect.objectContaining({ kind: 'too_large', code: 'pin_budget_exceeded', details: { maxTokens: budget - 1, usedTokens: pinTokens(STAGING, model), pinTokens: pinTokens(FRIDAY, model) } }),
    );
  });

  it('has a default budget in every preset', () => {
    for (const preset of Object.values(PRESETS)) expect(preset.pins).toEqual({ maxTokens: 4_000 });
  });

  it('given a pin not in force (never added, or removed), then 404 pin_not_found', () => {
    expect(() => assertPinned(pins, 'p1')).not.toThrow();
    expect(() => assertPinned(pins, 'p9')).toThrow(expect.objectContaining({ kind: 'not_found', code: 'pin_not_found' }));
  });
});
