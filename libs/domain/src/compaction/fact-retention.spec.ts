/**
 * The retention check: given the critical facts of a head and a summary,
 * when the summary is checked against what the model will see after the
 * pivot, then missing facts are carried forward within the budget and the
 * retention figure says how many were kept.
 */
import { PRESETS } from '../config';
import type { Message } from '../events';
import { summarizeHeuristically } from './heuristic/heuristic-summarizer';
import { planCompaction } from './plan';
import { CARRIED_FORWARD_HEADING, checkRetention, hiddenOutputFacts, prefixWithRetention } from './fact-retention';
import { parseSummaryRecord } from './heuristic/summary-record';
import { eventLog } from './testing/event-log';

const text = (role: Message['role'], body: string): Message => ({ id: body.slice(0, 8), role, parts: [{ type: 'text', text: body }] });

const head: Message[] = [
  text('user', 'Move the importer to S3. Never delete objects under s3://acme-prod/raw.'),
  {
    id: 'a1',
    role: 'assistant',
    parts: [
      { type: 'text', text: 'We chose multipart uploads because files exceed 5 GB.' },
      { type: 'tool_call', callId: 'c1', name: 'bash', input: { command: 'aws s3 cp big.csv s3://acme-staging/in/' } },
    ],
  },
  { id: 't1', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: 'upload failed: EntityTooLarge\nexit code: 1', isError: true }] },
];

describe('checkRetention', () => {
  const { facts } = summarizeHeuristically({ head, budgetTokens: 4_000 });

  it('finds the critical facts of the head: goal, constraints, decisions, commands, errors, values', () => {
    expect(facts.map((fact) => [fact.kind, fact.probe])).toEqual(
      expect.arrayContaining([
        ['goal', 'Move the importer to S3. Never delete objects under s3://acme-prod/raw.'],
        ['constraints', 'Never delete objects under s3://acme-prod/raw.'],
        ['decisions', 'We chose multipart uploads because files exceed 5 GB.'],
        ['commands', 'aws s3 cp big.csv s3://acme-staging/in/'],
        ['errors', 'upload failed: EntityTooLarge'],
        ['values', '5 GB'],
      ]),
    );
  });

  it('carries forward what a vague summary misses, most important first, and reports both figures', () => {
    // when an LLM-style summary keeps none of it
    const result = checkRetention({ facts, summary: 'Worked on the importer.', kept: [], budgetTokens: 4_000 });
    // then
    expect(result.summary.startsWith(`Worked on the importer.\n\n${CARRIED_FORWARD_HEADING}\n- Goal: Move the importer to S3.`)).toBe(true);
    expect(result.summary).toContain('- Constraint: Never delete objects under s3://acme-prod/raw.');
    expect(result.summary).toContain('- Error: upload failed: EntityTooLarge');
    expect(result.retention).toMatchObject({ ratio: 1, summarizerRatio: 0, critical: facts.length, kept: facts.length, carried: facts.length, missing: [] });
  });

  it('counts facts the kept messages show, and carries only what fits the budget', () => {
    // given the tail still shows the command, and room for only a few bullets
    const kept = ['aws s3 cp big.csv s3://acme-staging/in/ upload failed: EntityTooLarge'];
    const base = 'Worked on the importer.';
    const tight = checkRetention({ facts, summary: base, kept, budgetTokens: Math.ceil(base.length / 4) + 40 });
    // then
    expect(tight.retention.summarizerRatio).toBeGreaterThan(0);
    expect(tight.retention.carried).toBeGreaterThan(0);
    expect(tight.retention.ratio).toBeLessThan(1);
    expect(tight.retention.missing.length).toBe(tight.retention.critical - tight.retention.kept);
    expect(Math.ceil(tight.summary.length / 4)).toBeLessThanOrEqual(Math.ceil(base.length / 4) + 40);
  });

  it('is 1 with no critical facts', () => {
    expect(checkRetention({ facts: [], summary: '', kept: [], budgetTokens: 0 }).retention.ratio).toBe(1);
  });
});

describe('hiddenOutputFacts and prefixWithRetention', () => {
  it('carries forward an error that a kept result shows only in the cache (its head-only view hides it)', () => {
    // given a kept tool result whose view is the head of a long log, the error being at its end
    const full = `${'INFO ok\n'.repeat(5_000)}ERROR replication slot "etl_slot" is active for PID 4242`;
    const log = eventLog();
    log.user('Set up the replica.').assistant('Done.');
    log.user('Investigate the replication lag.').assistant('Looking.');
    log.user('Check the primary now.');
    log.tool('bash', { output: full.slice(0, 400), refId: 'ref-9' });
    const markerSeq = log.marker();
    const config = PRESETS.opencode.compaction;
    const plan = planCompaction({ events: log.events, pivot: null, markerSeq, config, usable: 180_000 });
    if (plan.kind !== 'plan') throw new Error(plan.reason);
    const kept = plan.keptMessages.flatMap((m) => m.parts).find((p) => p.type === 'tool_result');
    const outputs = new Map([['ref-9', full]]);
    // when
    expect(hiddenOutputFacts(plan.keptMessages, outputs).map((fact) => fact.probe)).toEqual(['ERROR replication slot "etl_slot" is active for PID 4242']);
    const { facts, record } = summarizeHeuristically({ head: plan.sourceHead, budgetTokens: plan.summaryBudgetTokens });
    const result = prefixWithRetention({ plan, summary: 'S', retain: null, config, facts, outputs });
    // then
    expect(kept).toMatchObject({ outputRef: { id: 'ref-9' } });
    expect(result.summary).toContain('- Error in bash output (ref=ref-9): ERROR replication slot "etl_slot" is active for PID 4242');
    expect(result.prefix.find((m) => m.metadata?.kind === 'compaction_summary')!.parts[0]).toMatchObject({ text: result.summary });
    expect(result.retention.ratio).toBe(1);
    expect(parseSummaryRecord(JSON.parse(JSON.stringify(record)))).toEqual(record);
  });
});

describe('salient lines of tool outputs', () => {
  const settingsLog = `${Array.from({ length: 3_000 }, (_, i) => `GET /healthz 200 ${i % 40} ms`).join('\n')}\nwal_buffers = 16MB\n${'GET /healthz 200 3 ms\n'.repeat(2_000)}done`;

  it('a setting a kept result shows only in the cache counts as critical and is carried forward, with its call', () => {
    // given
    const log = eventLog();
    log.user('Tune the replica.').assistant('Done.');
    log.user('Read the server log.').assistant('Looking.');
    log.user('Go on.');
    log.tool('bash', { output: settingsLog.slice(0, 300), refId: 'ref-4' });
    const markerSeq = log.marker();
    const config = PRESETS.opencode.compaction;
    const plan = planCompaction({ events: log.events, pivot: null, markerSeq, config, usable: 180_000 });
    if (plan.kind !== 'plan') throw new Error(plan.reason);
    const outputs = new Map([['ref-4', settingsLog]]);
    // when
    const hidden = hiddenOutputFacts(plan.keptMessages, outputs);
    const result = prefixWithRetention({ plan, summary: 'S', retain: null, config, facts: [], outputs });
    // then
    expect(hidden.map((fact) => [fact.kind, fact.probe])).toEqual([['excerpts', 'wal_buffers = 16MB']]);
    expect(result.summary).toContain('- In `bash (ref=ref-4)` output: wal_buffers = 16MB');
    expect(result.retention).toMatchObject({ ratio: 1, carried: 1 });
  });

  it('a salient line of a summarized result is a critical fact, kept in the summary with the command that printed it', () => {
    // given
    const head: Message[] = [
      text('user', 'Tune the replica.'),
      { id: 'a', role: 'assistant', parts: [{ type: 'tool_call', callId: 'k', name: 'bash', input: { command: 'tail -n 5000 /var/log/pg.log' } }] },
      { id: 't', role: 'tool', parts: [{ type: 'tool_result', callId: 'k', name: 'bash', output: settingsLog }] },
    ];
    // when
    const { facts, summary, record } = summarizeHeuristically({ head, budgetTokens: 2_000 });
    // then
    expect(record.excerpts).toEqual([expect.objectContaining({ text: 'wal_buffers = 16MB', source: 'tail -n 5000 /var/log/pg.log' })]);
    expect(facts.find((fact) => fact.kind === 'excerpts')).toMatchObject({ probe: 'wal_buffers = 16MB' });
    expect(summary).toContain('- `tail -n 5000 /var/log/pg.log`: wal_buffers = 16MB');
    expect(checkRetention({ facts, summary, kept: [], budgetTokens: 2_000 }).retention.ratio).toBe(1);
  });
});

describe('parseSummaryRecord', () => {
  it('reads a stored record back, and refuses what is not one', () => {
    expect(parseSummaryRecord(null)).toBeNull();
    expect(parseSummaryRecord({ v: 2 })).toBeNull();
    expect(parseSummaryRecord('record')).toBeNull();
    const partial = parseSummaryRecord({ v: 1, errors: [{ text: 'E1', first: 3, last: 9, hits: 2, fixed: true }, { nope: 1 }], todos: [{ text: 't', status: 'weird' }] });
    expect(partial).toMatchObject({
      errors: [{ text: 'E1', first: 3, last: 9, hits: 2, fixed: true, location: null, source: null }],
      todos: [{ text: 't', status: 'pending', origin: 'checklist' }],
      clock: 10,
    });
  });
});
