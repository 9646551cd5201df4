/**
 * Given a session log, when a compaction runs end to end with the built-in
 * summarizer, then each preset's pivot has its documented shape, the next
 * context passes the providers' validators, and a second compaction receives
 * the first summary as <previous-summary>.
 */
import { PRESET_NAMES, PresetName, resolveSessionConfig } from '../config';
import type { StoredEvent } from '../events';
import { buildModelView, latestPivot } from '../view/model-view';
import { renderAnthropic, renderOpenAIChat } from '../view/render';
import { validateAnthropicRequest, validateOpenAIChatMessages } from '../view/validate';
import { buildCompletedData, CompactionCompletion, decideCompletion } from './decide';
import { heuristicSummary } from './heuristic/heuristic-summarizer';
import { evaluateOverflow } from './overflow-policy';
import { planCompaction } from './plan';
import { buildPrefix } from './strategies';
import { buildSummarizerRequest } from './summarizer-input';
import { parseSummaryResponse } from './summary-parse';
import { eventLog } from './testing/event-log';

const limits = { context: 64_000, output: 8_000 };

function compact(preset: PresetName, log: ReturnType<typeof eventLog>) {
  const { compaction } = resolveSessionConfig(preset);
  const pivot = latestPivot(log.events);
  const usable = evaluateOverflow({ tokens: { total: 0 }, limits, config: compaction }).usable;
  const markerSeq = log.marker();
  const plan = planCompaction({ events: log.events, pivot: pivot?.data ?? null, markerSeq, config: compaction, usable });
  if (plan.kind !== 'plan') throw new Error(plan.reason);
  const head = plan.head.map((item) => item.message);
  const request = buildSummarizerRequest({ head, previousSummary: plan.previousSummary, config: compaction, sessionSystem: 'system' });
  const reply = heuristicSummary({
    head,
    previousSummary: plan.previousSummary,
    maxTokens: compaction.summaryMaxTokens,
    retain: compaction.strategy === 'retain-summary',
  });
  const parsed = parseSummaryResponse(reply, compaction.summaryMaxTokens);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const { summary, retain } = parsed.value;
  const prefix = buildPrefix({ plan, summary, retain, config: compaction });
  const data = buildCompletedData({
    marker: { seq: markerSeq, auto: true, reason: 'threshold' },
    plan,
    strategy: compaction.strategy,
    prefix,
    summary,
    retain,
    model: 'heuristic',
    durationMs: 1,
  });
  const appended = decideCompletion({ latestCompletedMarkerSeq: pivot?.data.markerSeq ?? null }, data, compaction);
  for (const event of appended) log.append(event.type, event.data as never);
  return { data, request, appended };
}

function session() {
  const log = eventLog();
  log.user('Set up the repo in /srv/app and keep Node 20.');
  log.tool('bash', { input: { command: 'git clone repo /srv/app' }, output: 'y'.repeat(20_000), refId: 'ref-1' });
  log.assistant('Cloned.').user('Fix src/index.ts.');
  log.tool('manage_todo_list', { output: '- [ ] fix index' });
  log.tool('read', { input: { path: 'src/index.ts' }, output: 'x'.repeat(8_000) });
  log.assistant('Fixed src/index.ts.').user('Now run the tests.');
  log.tool('bash', { input: { command: 'npm test' }, output: 'Error: 1 failing', isError: true });
  log.assistant('One test fails.').step(30_000);
  return log;
}

function assertValidContext(events: readonly StoredEvent[]) {
  const view = buildModelView({
    system: 'system',
    pivot: latestPivot(events),
    events,
    model: 'unknown-model',
    options: { contextBudgetTokens: 1_000_000 },
  });
  expect(validateAnthropicRequest(renderAnthropic(view))).toEqual([]);
  expect(validateOpenAIChatMessages(renderOpenAIChat(view))).toEqual([]);
  return view;
}

const shape = (data: CompactionCompletion) => data.prefix.map((m) => `${m.role}:${m.metadata?.kind}`);

describe('compaction end to end with the heuristic summarizer', () => {
  it.each([
    ['opencode', ['user:compaction_marker', 'assistant:compaction_summary'], 5],
    ['codex', ['user:compaction_user_message', 'user:compaction_user_message', 'user:compaction_user_message', 'user:compaction_summary', 'assistant:compaction_protected_tool', 'tool:compaction_protected_tool'], null],
    ['spec-000', ['user:compaction_retain', 'user:compaction_summary'], 11],
    // The whole window fits keepRecentTokens: like OpenCode, everything is summarized rather than nothing.
    ['spec-001', ['user:compaction_summary'], null],
    ['spec-003', ['assistant:compaction_summary'], null],
  ] as const)('%s builds its documented prefix', (preset, expected, tailFrom) => {
    const log = session();
    const before = log.head;
    const { data, appended } = compact(preset, log);

    expect(shape(data)).toEqual(expected);
    expect(data.tail.fromSeq).toBe(tailFrom);
    expect(data.coveredThroughSeq).toBeLessThanOrEqual(data.markerSeq);
    expect(data.markerSeq).toBe(before + 1);
    expect(appended.map((e) => e.type)).toEqual(
      resolveSessionConfig(preset).compaction.autoContinue ? ['compaction.completed', 'message.added'] : ['compaction.completed'],
    );
    expect(data.tokensAfter).toBeLessThan(data.tokensBefore);
    const view = assertValidContext(log.events);
    expect(view.coveredThroughSeq).toBe(data.coveredThroughSeq);
  });

  it.each(PRESET_NAMES)('%s passes the first summary to the second compaction as <previous-summary>', (preset) => {
    const log = session();
    const first = compact(preset, log);
    log.user('Fix the failing test in test/app.spec.ts.').assistant('Fixed.').step(40_000);
    const second = compact(preset, log);

    const instruction = second.request.messages.at(-1)!.content;
    expect(instruction).toContain(`<previous-summary>\n${first.data.summary}\n</previous-summary>`);
    expect(second.data.summary).toContain('Set up the repo in /srv/app');
    expect(second.data.basePivotMarkerSeq).toBe(first.data.markerSeq);
    assertValidContext(log.events);
  });
});
