import type { Message } from '../events';
import { heuristicSummary } from './heuristic-summarizer';
import { SUMMARY_SECTIONS } from './prompts';
import { parseSummaryResponse } from './summary-parse';

const text = (id: string, role: Message['role'], body: string): Message => ({ id, role, parts: [{ type: 'text', text: body }] });

const head: Message[] = [
  text('u1', 'user', 'Fix the failing build in src/server/main.ts. Do not change the public API.'),
  {
    id: 'a1',
    role: 'assistant',
    parts: [
      { type: 'text', text: 'I decided to use pnpm instead of npm. Next I will run the tests.' },
      { type: 'tool_call', callId: 'c1', name: 'bash', input: { command: 'pnpm test --filter server' } },
      { type: 'tool_call', callId: 'c2', name: 'read', input: { path: './lib/util.ts' } },
    ],
  },
  {
    id: 't1',
    role: 'tool',
    parts: [
      {
        type: 'tool_result',
        callId: 'c1',
        name: 'bash',
        output: 'PASS a\nTypeError: x is not a function\n  at src/server/main.ts:10',
        outputRef: { id: 'ref-1', byte_size: 60, line_count: 3 },
      },
      { type: 'tool_result', callId: 'c2', name: 'read', output: 'export const x = 1;' },
    ],
  },
  text('a2', 'assistant', 'Fixed the import in src/server/main.ts.'),
  text('u2', 'user', 'Now also update docs/README.md, and always keep the changelog.'),
  {
    id: 'a3',
    role: 'assistant',
    parts: [{ type: 'tool_call', callId: 'c3', name: 'shell', input: { command: ['bash', '-lc', 'git diff --stat'] } }],
  },
  { id: 't3', role: 'tool', parts: [{ type: 'tool_result', callId: 'c3', name: 'shell', output: 'fatal: not a git repository', isError: true }] },
];

const sections = Object.values(SUMMARY_SECTIONS);

describe('heuristicSummary', () => {
  const summary = heuristicSummary({ head, previousSummary: null, maxTokens: 8_000 });

  it('answers in the <summary> shape and keeps every template section, even when empty', () => {
    expect(summary.startsWith('<summary>\n## Goal\n')).toBe(true);
    expect(summary.endsWith('\n</summary>')).toBe(true);
    for (const section of sections) expect(summary).toMatch(new RegExp(`^#{2,3} ${section}$`, 'm'));
    const empty = heuristicSummary({ head: [], previousSummary: null, maxTokens: 8_000 });
    for (const section of sections) expect(empty).toMatch(new RegExp(`^#{2,3} ${section}\n- \\(none\\)|^## Progress$`, 'm'));
  });

  it('extracts requests, constraints, decisions, next steps, tool use, files, commands and errors', () => {
    expect(summary).toContain('## Goal\n- Fix the failing build in src/server/main.ts. Do not change the public API.');
    expect(summary).toContain('- Latest request: Now also update docs/README.md, and always keep the changelog.');
    expect(summary).toContain('- Do not change the public API.');
    expect(summary).toContain('- I decided to use pnpm instead of npm.');
    expect(summary).toContain('- Next I will run the tests.');
    expect(summary).toContain('- Fixed the import in src/server/main.ts.');
    expect(summary).toContain('- Called bash 1×');
    expect(summary).toContain('- Called read 1×');
    expect(summary).toContain('- Command: pnpm test --filter server');
    expect(summary).toContain('- Command: git diff --stat');
    expect(summary).toContain('- bash: TypeError: x is not a function');
    expect(summary).toContain('- shell: fatal: not a git repository');
    expect(summary).toContain('### Blocked\n- shell failed: fatal: not a git repository');
    const files = summary.slice(summary.indexOf('## Relevant Files'));
    expect(files).toBe('## Relevant Files\n- src/server/main.ts\n- ./lib/util.ts\n- docs/README.md\n</summary>');
  });

  it('is deterministic and parses with the LLM parser', () => {
    expect(heuristicSummary({ head, previousSummary: null, maxTokens: 8_000 })).toBe(summary);
    expect(parseSummaryResponse(summary, 8_000)).toMatchObject({ ok: true, value: { retain: null } });
  });

  it('lists tool output refs in <retain> when asked', () => {
    const withRetain = heuristicSummary({ head, previousSummary: null, maxTokens: 8_000, retain: true });
    expect(parseSummaryResponse(withRetain, 8_000)).toMatchObject({ ok: true, value: { retain: '- ref=ref-1 (bash, 3 lines)' } });
  });

  it('merges the previous summary: earlier goal first, new facts added, progress replaced', () => {
    const previous = parseSummaryResponse(summary, 8_000);
    if (!previous.ok) throw new Error('unparsed');
    const next = heuristicSummary({
      head: [text('u3', 'user', 'Then release v2 from packages/cli/index.ts.')],
      previousSummary: previous.value.summary,
      maxTokens: 8_000,
    });
    expect(next).toContain('## Goal\n- Fix the failing build in src/server/main.ts. Do not change the public API.\n- Then release v2');
    expect(next).toContain('- Command: pnpm test --filter server');
    expect(next).toContain('- packages/cli/index.ts');
    expect(next).toContain('- src/server/main.ts');
  });

  it('keeps a previous summary in another shape as one bullet', () => {
    const next = heuristicSummary({ head: [], previousSummary: 'Free-form notes about the task.', maxTokens: 8_000 });
    expect(next).toContain('## Critical Context\n- Earlier summary: Free-form notes about the task.');
  });

  it('records the request instructions it cannot follow', () => {
    expect(heuristicSummary({ head, previousSummary: null, maxTokens: 8_000, instructions: 'focus on tests' })).toContain(
      '- Requested focus: focus on tests',
    );
  });

  it('stays within maxTokens, dropping the oldest bullets of the longest sections first', () => {
    const long: Message[] = Array.from({ length: 60 }, (_, i) => text(`u${i}`, 'user', `Never touch file${i}/part${i}.ts please.`));
    const bounded = heuristicSummary({ head: long, previousSummary: null, maxTokens: 300 });
    const parsed = parseSummaryResponse(bounded, 300);
    expect(parsed.ok).toBe(true);
    for (const section of sections) expect(bounded).toContain(section);
    expect(bounded).toContain('file59/part59.ts');
    expect(bounded).not.toContain('file30/part30.ts');
  });
});
