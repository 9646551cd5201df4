import { CompactionConfig, PRESETS } from '../config';
import type { Message } from '../events';
import { DEFAULT_RETAIN_PROMPT, OPENCODE_SYSTEM_PROMPT } from './prompts';
import { emptyRecord } from './heuristic/summary-record';
import { renderRecord, templateForStrategy } from './heuristic/summary-template';
import {
  buildSummarizerRequest,
  formatHeadForSummarizer,
  HISTORY_OPENER,
  stripUnansweredToolCalls,
  summaryInstruction,
  trimSummarizerInputForOverflow,
} from './summarizer-input';

const config = (patch: Partial<CompactionConfig> = {}): CompactionConfig => ({
  ...PRESETS['spec-000'].compaction,
  summaryPrompt: 'Summarize.',
  ...patch,
});

const user = (id: string, text: string): Message => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const assistantCalls = (id: string, callIds: string[], text?: string): Message => ({
  id,
  role: 'assistant',
  parts: [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...callIds.map((callId) => ({ type: 'tool_call' as const, callId, name: 'bash', input: { command: 'ls' } })),
  ],
});
const results = (id: string, callIds: string[], output = 'ok'): Message => ({
  id,
  role: 'tool',
  parts: callIds.map((callId) => ({ type: 'tool_result' as const, callId, name: 'bash', output })),
});

/** The sections block every instruction carries: spec-000's template (the config's strategy is retain-summary). */
const SECTIONS = [
  'Write the summary in exactly these sections, in this order; leave out a section with nothing to say:',
  '## 1. Task Overview',
  '### Goal',
  '### Constraints',
  '### User Messages',
  '## 2. Current State',
  '### Done',
  '### In Progress',
  '### Files',
  '## 3. Important Discoveries',
  '### Decisions',
  '### Errors',
  '## 4. Next Steps',
  '## 5. Context to Preserve',
].join('\n');

describe('summaryInstruction', () => {
  it('passes the previous summary as <previous-summary> with the update instruction', () => {
    expect(summaryInstruction({ config: config(), previousSummary: 'We fixed the parser.' })).toBe(
      [
        'Update the anchored summary below using the conversation history above.',
        'Preserve still-true details, remove stale details, and merge in the new facts.',
        '<previous-summary>',
        'We fixed the parser.',
        '</previous-summary>',
        '',
        'Summarize.',
        '',
        SECTIONS,
      ].join('\n'),
    );
  });

  it('given a previous record, then the model updates the record in the template sections, not the rendered text', () => {
    const previousRecord = emptyRecord();
    previousRecord.goal = [{ text: 'Port the parser to Rust', first: 1, last: 1, hits: 1 }];
    previousRecord.constraints = [{ text: 'Never change the public API.', first: 1, last: 1, hits: 1, cued: true }];
    const instruction = summaryInstruction({ config: config(), previousSummary: 'an older text', previousRecord });
    const previous = instruction.slice(instruction.indexOf('<previous-summary>'), instruction.indexOf('</previous-summary>'));
    expect(previous).toContain(renderRecord(previousRecord, templateForStrategy('retain-summary')));
    expect(previous).toContain('### Goal\n- Port the parser to Rust');
    expect(previous).toContain('### Constraints\n- Never change the public API.');
    expect(previous).not.toContain('an older text');
  });

  it('asks every strategy for the sections of its record template', () => {
    for (const strategy of ['summary-tail', 'user-rebuild', 'recent-tokens', 'compacted-context'] as const) {
      const instruction = summaryInstruction({ config: config({ strategy }), previousSummary: null });
      const headings = templateForStrategy(strategy).sections.map((section) => `${'#'.repeat(section.level)} ${section.heading}`);
      expect(instruction).toContain(`say:\n${headings.join('\n')}`);
    }
  });

  it('given pins, then the model is told the agent keeps them verbatim beside the summary', () => {
    const pins = [
      { pinId: 'p1', text: 'Staging is db-staging:5432.', seq: 3 },
      { pinId: 'p2', text: 'Never run migrations on Friday.', seq: 5 },
    ];
    const instruction = summaryInstruction({ config: config(), previousSummary: null, pins });
    expect(instruction).toContain('<pinned>\nStaging is db-staging:5432.\nNever run migrations on Friday.\n</pinned>');
    expect(instruction).toMatch(/verbatim right after your summary, so do not repeat it/);
  });

  it('appends summary and retain directives as bullets, then the request instructions', () => {
    const instruction = summaryInstruction({
      config: config({ summaryDirectives: ['Keep ref ids', 'Name every file'], retainPrompt: 'List in <retain>:', retainDirectives: ['decisions'] }),
      previousSummary: null,
      instructions: '  focus on the migration  ',
    });
    expect(instruction).toBe(
      [
        'Summarize.',
        '- Keep ref ids',
        '- Name every file',
        '',
        SECTIONS,
        '',
        'List in <retain>:',
        '- decisions',
        '',
        'Additional instructions for this summary:',
        'focus on the migration',
      ].join('\n'),
    );
  });

  it('asks for <retain> with the default prompt when only retain directives are set', () => {
    expect(summaryInstruction({ config: config({ retainDirectives: ['refs'] }), previousSummary: null })).toBe(
      `Summarize.\n\n${SECTIONS}\n\n${DEFAULT_RETAIN_PROMPT}\n- refs`,
    );
  });
});

describe('stripUnansweredToolCalls (seed 000, 2.6.1)', () => {
  it('keeps the content of a trailing assistant message with calls, without the calls', () => {
    const head = [user('u', 'go'), assistantCalls('a', ['c1'], 'Let me look.')];
    expect(stripUnansweredToolCalls(head)).toEqual([user('u', 'go'), { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'Let me look.' }] }]);
  });

  it('drops a trailing assistant message that only had calls, and orphan results', () => {
    const head = [user('u', 'go'), results('r', ['gone']), assistantCalls('a', ['c1'])];
    expect(stripUnansweredToolCalls(head)).toEqual([user('u', 'go')]);
  });

  it('leaves answered pairs alone', () => {
    const head = [user('u', 'go'), assistantCalls('a', ['c1']), results('r', ['c1'])];
    expect(stripUnansweredToolCalls(head)).toEqual(head);
  });
});

describe('formatHeadForSummarizer', () => {
  it('renders calls and results as text, clips results, strips media and reasoning, hides agent-invisible messages', () => {
    const head: Message[] = [
      {
        id: 'u',
        role: 'user',
        parts: [
          { type: 'text', text: 'look at this' },
          { type: 'file', mediaType: 'image/png', filename: 'shot.png', data: 'AAAA' },
        ],
      },
      { id: 'hidden', role: 'user', parts: [{ type: 'text', text: 'secret' }], metadata: { agentVisible: false } },
      { id: 'a', role: 'assistant', parts: [{ type: 'reasoning', text: 'thinking' }, { type: 'tool_call', callId: 'c1', name: 'read', input: { path: 'a.ts' } }] },
      {
        id: 'r',
        role: 'tool',
        parts: [
          {
            type: 'tool_result',
            callId: 'c1',
            name: 'read',
            output: 'y'.repeat(300),
            isError: true,
            outputRef: { id: 'ref-9', byte_size: 300, line_count: 1 },
          },
        ],
      },
    ];
    const turns = formatHeadForSummarizer(head, 120);
    expect(turns).toHaveLength(3);
    expect(turns[0]).toEqual({ role: 'user', content: 'look at this\n[Attached image/png: shot.png]' });
    expect(turns[1]).toEqual({ role: 'assistant', content: '[Tool call read (c1)] {"path":"a.ts"}' });
    expect(turns[2].role).toBe('user');
    expect(turns[2].content.startsWith('[Tool result read (c1) error, ref=ref-9]\n')).toBe(true);
    expect(Array.from(turns[2].content.split('\n')[1])).toHaveLength(120);
    expect(turns[2].content).toContain('chars truncated');
  });

  it('adds what the clip hides from the full output (tool-output cache): its error lines with their file:line, and its last lines', () => {
    // given a result whose in-context view is the head of a long log, and the full text from the cache
    const full = `${'ok line\n'.repeat(3_000)}Error: deadlock detected\n    at commit (src/db/tx.ts:91:7)\nexit code: 1`;
    const head: Message[] = [
      { id: 'a', role: 'assistant', parts: [{ type: 'tool_call', callId: 'c1', name: 'bash', input: { command: 'npm run migrate' } }] },
      { id: 'r', role: 'tool', parts: [{ type: 'tool_result', callId: 'c1', name: 'bash', output: full.slice(0, 500), truncated: true }] },
    ];
    // when
    const withFull = formatHeadForSummarizer(head, 200, new Map([['c1', full]]));
    // then
    expect(withFull.at(-1)!.content).toContain('[Error lines of the full output (3003 lines):]\nline 3001: Error: deadlock detected (at src/db/tx.ts:91:7)');
    expect(withFull.at(-1)!.content).toContain('[Last lines of the full output:]');
    expect(withFull.at(-1)!.content).toContain('exit code: 1');
    // and without it, nothing is invented
    expect(formatHeadForSummarizer(head, 200).at(-1)!.content).not.toContain('deadlock');
  });

  it('opens with a user turn and merges same-role turns', () => {
    const head = [
      { id: 'a1', role: 'assistant' as const, parts: [{ type: 'text' as const, text: 'one' }] },
      { id: 'a2', role: 'assistant' as const, parts: [{ type: 'text' as const, text: 'two' }] },
    ];
    expect(formatHeadForSummarizer(head, 2_000)).toEqual([
      { role: 'user', content: HISTORY_OPENER },
      { role: 'assistant', content: 'one\n\ntwo' },
    ]);
  });
});

describe('buildSummarizerRequest', () => {
  it('ends with the instruction in a user turn, with no tools, bounded by summaryMaxTokens', () => {
    const request = buildSummarizerRequest({
      head: [user('u', 'fix the bug'), { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'fixed' }] }],
      previousSummary: null,
      config: config({ summaryMaxTokens: 4_000 }),
      sessionSystem: 'You are a coding agent.',
    });
    expect(request).toEqual({
      system: 'You are a coding agent.',
      messages: [
        { role: 'user', content: 'fix the bug' },
        { role: 'assistant', content: 'fixed' },
        { role: 'user', content: `Summarize.\n\n${SECTIONS}` },
      ],
      maxOutputTokens: 4_000,
    });
  });

  it("appends the instruction to a trailing user turn and prefers the config's system prompt", () => {
    const request = buildSummarizerRequest({
      head: [user('u', 'fix the bug')],
      previousSummary: null,
      config: config({ summarySystemPrompt: OPENCODE_SYSTEM_PROMPT }),
      sessionSystem: 'ignored',
    });
    expect(request.system).toBe(OPENCODE_SYSTEM_PROMPT);
    expect(request.messages).toEqual([{ role: 'user', content: `fix the bug\n\n---\n\nSummarize.\n\n${SECTIONS}` }]);
  });
});

describe('trimSummarizerInputForOverflow (Codex)', () => {
  const head = [
    assistantCalls('a1', ['c1', 'c2'], 'checking'),
    results('r1', ['c1']),
    user('u', 'next'),
    results('r2', ['c2']),
    assistantCalls('a2', ['c3']),
    results('r3', ['c3']),
  ];

  it('drops the oldest items together with their pairs', () => {
    expect(trimSummarizerInputForOverflow(head, 1)).toEqual({
      head: [user('u', 'next'), assistantCalls('a2', ['c3']), results('r3', ['c3'])],
      trimmed: 1,
      notice: 'Trimmed 1 older thread item(s) before compacting so the prompt fits the model context window.',
    });
    expect(trimSummarizerInputForOverflow(head, 3)).toMatchObject({ head: [], trimmed: 3 });
  });

  it('keeps the other results of a message that answered several calls', () => {
    const shared = [assistantCalls('a1', ['c1']), assistantCalls('a2', ['c2']), results('r', ['c1', 'c2'])];
    expect(trimSummarizerInputForOverflow(shared, 1).head).toEqual([assistantCalls('a2', ['c2']), results('r', ['c2'])]);
  });

  it('says nothing when nothing was trimmed', () => {
    expect(trimSummarizerInputForOverflow(head, 0)).toEqual({ head, trimmed: 0, notice: null });
  });
});
