import { buildDigestMessage, buildDigestPrompt, finishLlmDigest, heuristicDigest } from './digest';
import { ToolPair } from './tool-exchanges';
import { archiveOptions } from './testing/session-log';

const pair = (callId: string, output: string, extra: Partial<ToolPair['result']> = {}, input: unknown = {}): ToolPair => ({
  input,
  result: { type: 'tool_result', callId, name: 'read_file', output, ...extra },
});

describe('heuristicDigest (strategy heuristic)', () => {
  const options = archiveOptions();

  it('writes one line per pair with status, ref, input and the output on one line', () => {
    const digest = heuristicDigest(
      [
        pair('c1', 'line 1\n  line 2', { outputRef: { id: 'r1', byte_size: 14, line_count: 2 } }, { path: 'a.ts' }),
        pair('c2', '', { isError: true }),
      ],
      options,
    );

    expect(digest).toBe(
      '- read_file (ok, ref=r1) input {"path":"a.ts"}: line 1 line 2\n' + '- read_file (error) input {}: (empty output)',
    );
  });

  it('stays within heuristicClipRunes and keeps every pair even next to a huge output', () => {
    const digest = heuristicDigest([pair('c1', 'x'.repeat(200_000)), pair('c2', 'small result')], options);

    expect(Array.from(digest).length).toBeLessThanOrEqual(800);
    expect(digest).toContain('chars truncated');
    expect(digest.endsWith('- read_file (ok) input {}: small result')).toBe(true);
  });

  it('lists the newest pairs and counts the older ones when they are too many for a line each', () => {
    const pairs = Array.from({ length: 990 }, (_, i) => pair(`c${i}`, `output ${i} `.repeat(200)));

    const digest = heuristicDigest(pairs, options);

    expect(Array.from(digest).length).toBeLessThanOrEqual(800);
    const lines = digest.split('\n');
    expect(lines[0]).toBe(`- ${990 - (lines.length - 1)} earlier tool result(s) archived, not listed`);
    expect(lines[1]).toMatch(new RegExp(`^- read_file \\(ok\\) input \\{\\}: output ${990 - (lines.length - 1)} `));
    expect(lines[lines.length - 1]).toMatch(/^- read_file \(ok\) input \{\}: output 989 .*output 989$/);
  });
});

describe('strategy llm', () => {
  it('builds a tool-less summary request from the pairs, clipped to inputClipChars', () => {
    const options = archiveOptions({ inputClipChars: 2_000, outputClipRunes: 500 });

    const { system, user } = buildDigestPrompt(
      [pair('c1', 'y'.repeat(50_000), { isError: true }), pair('c2', 'tail result', {}, { q: 1 })],
      options,
    );

    expect(system).toContain('Do not write tool calls');
    expect(user).toContain('At most 500 characters');
    const material = user.slice(user.indexOf('Tool results:\n') + 'Tool results:\n'.length);
    expect(Array.from(material).length).toBeLessThanOrEqual(2_000);
    expect(material).toContain('[1] Tool: read_file\nStatus: error\nInput: {}\nOutput:\nyyy');
    expect(material.endsWith('[2] Tool: read_file\nStatus: ok\nInput: {"q":1}\nOutput:\ntail result')).toBe(true);
  });

  it('keeps the newest pairs within inputClipChars when they are too many for a block each', () => {
    const pairs = Array.from({ length: 990 }, (_, i) => pair(`c${i}`, `output ${i} `.repeat(200)));

    const { user } = buildDigestPrompt(pairs, archiveOptions());

    const material = user.slice(user.indexOf('Tool results:\n') + 'Tool results:\n'.length);
    expect(Array.from(material).length).toBeLessThanOrEqual(12_000);
    const [, omitted, first] = /^\[(\d+) earlier tool result\(s\) omitted\]\n\n\[(\d+)\] Tool: read_file/.exec(material)!;
    expect(Number(first)).toBe(Number(omitted) + 1);
    expect(material).toContain('[990] Tool: read_file');
  });

  it('clips the answer to outputClipRunes, and returns null for an empty answer so the caller falls back', () => {
    const options = archiveOptions({ outputClipRunes: 100 });

    expect(finishLlmDigest('  - read a.ts: ok  ', options)).toBe('- read a.ts: ok');
    expect(Array.from(finishLlmDigest('z'.repeat(1_000), options)!).length).toBeLessThanOrEqual(100);
    expect(finishLlmDigest(' \n ', options)).toBeNull();
  });
});

describe('buildDigestMessage', () => {
  it("is seed 001's tool_summary: a user message the model sees and the transcript does not", () => {
    expect(buildDigestMessage('- bash (ok) input {}: done', 'd1')).toEqual({
      id: 'd1',
      role: 'user',
      parts: [{ type: 'text', text: '[Compaction tool digest]\n- bash (ok) input {}: done' }],
      metadata: { agentVisible: true, userVisible: false, kind: 'tool_summary' },
    });
  });
});
