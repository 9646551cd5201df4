import { CompactionConfig, PRESETS, PresetName } from '../config';
import type { CompactionCompletedData, Message } from '../events';
import { CompactionPlan, planCompaction } from './plan';
import { CODEX_SUMMARY_PREFIX } from './prompts';
import { buildKeepLastTurnsFallback, buildPrefix, codexApproxTokens, PREFIX_KINDS, selectUserMessages } from './strategies';
import { eventLog } from './testing/event-log';

const config = (preset: PresetName, patch: Partial<CompactionConfig> = {}): CompactionConfig => ({
  ...PRESETS[preset].compaction,
  ...patch,
});

function planOf(log: ReturnType<typeof eventLog>, compaction: CompactionConfig, pivot: CompactionCompletedData | null = null): CompactionPlan {
  const markerSeq = log.marker();
  const plan = planCompaction({ events: log.events, pivot, markerSeq, config: compaction, usable: 180_000 });
  if (plan.kind !== 'plan') throw new Error(plan.reason);
  return plan;
}

const shape = (prefix: Message[]) => prefix.map((m) => [m.id, m.role, m.metadata?.kind]);
const texts = (prefix: Message[]) => prefix.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : p.type)).join(''));

const session = () => {
  const log = eventLog();
  log.user('build the parser').assistant('done').user('add tests').assistant('added');
  return log;
};

describe('buildPrefix per strategy', () => {
  it('summary-tail (OpenCode): the marker as a user message, the summary as the assistant answer', () => {
    const plan = planOf(session(), config('opencode'));
    const prefix = buildPrefix({ plan, summary: 'S', retain: null, config: config('opencode') });
    expect(shape(prefix)).toEqual([
      ['cmp-5-marker', 'user', PREFIX_KINDS.marker],
      ['cmp-5-summary', 'assistant', PREFIX_KINDS.summary],
    ]);
    expect(texts(prefix)).toEqual(['What did we do so far?', 'S']);
  });

  it('retain-summary (seed 000): retain first, then the summary, both as user messages', () => {
    const plan = planOf(session(), config('spec-000'));
    const prefix = buildPrefix({ plan, summary: 'S', retain: 'R', config: config('spec-000') });
    expect(shape(prefix)).toEqual([
      ['cmp-5-retain', 'user', PREFIX_KINDS.retain],
      ['cmp-5-summary', 'user', PREFIX_KINDS.summary],
    ]);
    expect(texts(prefix)).toEqual(['R', 'S']);
    expect(shape(buildPrefix({ plan, summary: 'S', retain: null, config: config('spec-000') }))).toEqual([
      ['cmp-5-summary', 'user', PREFIX_KINDS.summary],
    ]);
  });

  it('recent-tokens (seed 001): one user message under [Previous conversation summary]', () => {
    const plan = planOf(session(), config('spec-001'));
    const prefix = buildPrefix({ plan, summary: 'S', retain: null, config: config('spec-001') });
    expect(shape(prefix)).toEqual([['cmp-5-summary', 'user', PREFIX_KINDS.summary]]);
    expect(texts(prefix)).toEqual(['[Previous conversation summary]\nS']);
  });

  it('compacted-context (seed 003): an assistant message marked [COMPACTED_CONTEXT], never twice', () => {
    const plan = planOf(session(), config('spec-003'));
    const prefix = buildPrefix({ plan, summary: 'S', retain: null, config: config('spec-003') });
    expect(shape(prefix)).toEqual([['cmp-5-summary', 'assistant', PREFIX_KINDS.summary]]);
    expect(texts(prefix)).toEqual(['[COMPACTED_CONTEXT]\nS']);
    expect(texts(buildPrefix({ plan, summary: '[COMPACTED_CONTEXT] S', retain: null, config: config('spec-003') }))).toEqual([
      '[COMPACTED_CONTEXT] S',
    ]);
  });

  it('builds the same prefix for the same marker (retries)', () => {
    const plan = planOf(session(), config('opencode'));
    const input = { plan, summary: 'S', retain: 'R', config: config('opencode') };
    expect(buildPrefix(input)).toEqual(buildPrefix(input));
  });
});

describe('user-rebuild (Codex)', () => {
  const previous: CompactionCompletedData = {
    markerSeq: 1,
    coveredThroughSeq: 0,
    summary: 'old summary',
    prefix: [
      { id: 'cmp-1-user-0', role: 'user', parts: [{ type: 'text', text: 'zero' }], metadata: { kind: PREFIX_KINDS.userMessage } },
      { id: 'cmp-1-summary', role: 'user', parts: [{ type: 'text', text: `${CODEX_SUMMARY_PREFIX}\nold summary` }], metadata: { kind: PREFIX_KINDS.summary } },
    ],
    strategy: 'user-rebuild',
    model: 'heuristic',
    tokensBefore: 0,
    tokensAfter: 0,
    messagesCompacted: 0,
    durationMs: 0,
  };

  it('rebuilds real user messages, the prefixed summary, and the latest protected tool result', () => {
    const log = eventLog();
    log.user('first');
    log.user('<environment_context>cwd=/repo</environment_context>');
    log.tool('manage_todo_list', { output: 'todo v1' });
    log.user('  <turn_aborted>interrupted</turn_aborted>');
    log.user(`${CODEX_SUMMARY_PREFIX}\nan older summary pasted back`);
    log.user('continue', { userVisible: false, kind: 'auto_continue' });
    log.tool('bash', { output: 'ls' });
    const latestTodo = log.tool('manage_todo_list', { output: 'todo v2' });
    log.user('second');
    const plan = planOf(log, config('codex'), previous);

    const prefix = buildPrefix({ plan, summary: 'S', retain: null, config: config('codex') });

    expect(texts(prefix)).toEqual(['zero', 'first', 'second', `${CODEX_SUMMARY_PREFIX}\nS`, 'tool_call', 'tool_result']);
    expect(shape(prefix)).toEqual([
      ['cmp-13-user-0', 'user', PREFIX_KINDS.userMessage],
      ['cmp-13-user-1', 'user', PREFIX_KINDS.userMessage],
      ['cmp-13-user-2', 'user', PREFIX_KINDS.userMessage],
      ['cmp-13-summary', 'user', PREFIX_KINDS.summary],
      [`cmp-13-call-${latestTodo}`, 'assistant', PREFIX_KINDS.protectedTool],
      [`cmp-13-result-${latestTodo}`, 'tool', PREFIX_KINDS.protectedTool],
    ]);
    expect(prefix[5].parts[0]).toMatchObject({ type: 'tool_result', callId: latestTodo, output: 'todo v2' });
  });

  it('keeps user messages newest first within the budget, middle-truncating the boundary one', () => {
    const log = eventLog();
    log.user('a'.repeat(8)).user('b'.repeat(100)).user('c'.repeat(20));
    const plan = planOf(log, config('codex'));
    expect(selectUserMessages(plan, 10)).toEqual([`${'b'.repeat(10)}…20 tokens truncated…${'b'.repeat(10)}`, 'c'.repeat(20)]);
    expect(selectUserMessages(plan, 0)).toEqual([]);
  });

  // Codex (openai/codex, codex-rs/core/src/compact.rs, build_compacted_history_with_limit) counts the 20k user-message
  // budget with truncate.rs's approx_token_count: UTF-8 bytes / 4, rounded up (`len().saturating_add(3) / 4`), not chars.
  it('counts the user-message budget in Codex tokens: UTF-8 bytes / 4, so CJK weighs three times its characters', () => {
    // given two CJK messages of 40 characters (120 UTF-8 bytes, 30 Codex tokens, though only 10 by chars / 4)
    const log = eventLog();
    log.user('一'.repeat(40)).assistant('ok').user('二'.repeat(40));
    const plan = planOf(log, config('codex'));
    // when the budget is 40 Codex tokens
    const selected = selectUserMessages(plan, 40);
    // then the newest fits whole (30) and the older is cut to the 10 tokens left: 20 bytes a side, 6 whole characters
    expect(selected[1]).toBe('二'.repeat(40));
    expect(selected[0]).toBe(`${'一'.repeat(6)}…20 tokens truncated…${'一'.repeat(6)}`);
    expect(codexApproxTokens('一'.repeat(40))).toBe(30);
    expect(codexApproxTokens('abcde')).toBe(2);
  });

  it('says (no summary available) for an empty summary', () => {
    const plan = planOf(session(), config('codex'));
    expect(texts(buildPrefix({ plan, summary: '', retain: null, config: config('codex') })).at(-1)).toBe('(no summary available)');
  });
});

describe('buildKeepLastTurnsFallback', () => {
  it('carries the previous prefix and adds no summary', () => {
    const previousPrefix: Message[] = [{ id: 'p', role: 'user', parts: [{ type: 'text', text: 'kept' }], metadata: { kind: PREFIX_KINDS.summary } }];
    const plan = { ...planOf(session(), config('spec-003')), previousPrefix };
    const prefix = buildKeepLastTurnsFallback(plan);
    expect(prefix).toEqual(previousPrefix);
    expect(prefix).not.toBe(previousPrefix);
    expect(buildKeepLastTurnsFallback(planOf(session(), config('spec-003')))).toEqual([]);
  });
});
