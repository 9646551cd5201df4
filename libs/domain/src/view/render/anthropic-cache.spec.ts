// Type-only imports, in a spec: the view with breakpoints compiles against the SDK's request params, with no cast.
// eslint-disable-next-line no-restricted-imports
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { renderToolOutputTools } from '../../tool-output';
import { assistant, call, compacted, msg, pinned, result, text, tool, user, viewOf } from '../testing/events';
import { validateAnthropicRequest } from '../validate';
import { AnthropicRequest, renderAnthropic, withToolsBreakpoint } from './anthropic';
import { renderContext } from './index';

const EPHEMERAL = { type: 'ephemeral' };
const HOUR = { type: 'ephemeral', ttl: '1h' };

/** Every block carrying a breakpoint, as `messages.<i>.content.<j>` or `system.<j>`. */
function breakpoints(request: AnthropicRequest): string[] {
  const at: string[] = [];
  if (Array.isArray(request.system)) request.system.forEach((b, j) => b.cache_control && at.push(`system.${j}`));
  request.messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && at.push(`messages.${i}.content.${j}`)));
  return at;
}

/** A session after a compaction with a pin: prefix (summary), pins, then two steps with a tool call. */
const compactedSession = () =>
  viewOf(
    [
      user('u0', 'old work'), // seq 1
      pinned('p1', 'Deploys go through staging.'), // seq 2
      compacted(2, [msg('s1', 'user', [text('Summary: the build was fixed.')])], { pins: [{ pinId: 'p1', text: 'Deploys go through staging.', seq: 2 }] }), // seq 3
      user('u1', 'run the tests'),
      assistant('a1', 'running', call('c1', 'bash', { cmd: 'npm test' })),
      tool('t1', result('c1', '2 passed')),
    ],
    { system: 'be brief' },
  );

// Placement follows Anthropic's "Prompt caching" guide: the prefix is tools, system, messages in
// that order; a breakpoint caches everything up to and including its block; at most four per request.
describe('renderAnthropic with cache breakpoints', () => {
  it('marks the system prompt, the end of the prefix and pins, and the last block', () => {
    // given a compacted session with a pin
    const view = compactedSession();
    // when rendered with 5-minute breakpoints
    const request = renderAnthropic(view, { cacheTtl: '5m' });
    // then system is one text block with the marker; the pins' last block ends the stable prefix,
    // inside the first turn (the new user text merges into it); the last block is marked
    expect(request.system).toEqual([{ type: 'text', text: 'be brief', cache_control: EPHEMERAL }]);
    expect(request.messages[0].content.map((b) => ('text' in b ? b.text : b.type))).toEqual([
      'Summary: the build was fixed.',
      expect.stringContaining('Pinned'),
      'Deploys go through staging.',
      'run the tests',
    ]);
    expect(request.messages[0].content[2].cache_control).toEqual(EPHEMERAL);
    expect(request.messages.at(-1)!.content.at(-1)).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: '2 passed', cache_control: EPHEMERAL });
    expect(breakpoints(request)).toEqual(['system.0', 'messages.0.content.2', 'messages.2.content.0']);
    expect(validateAnthropicRequest(request)).toEqual([]);
  });

  it('changes nothing else: without the markers it is the plain render', () => {
    const view = compactedSession();
    const strip = (request: AnthropicRequest) =>
      JSON.parse(JSON.stringify(request, (key, value) => (key === 'cache_control' ? undefined : value)));
    const marked = strip(renderAnthropic(view, { cacheTtl: '1h' }));
    expect({ ...marked, system: marked.system[0].text }).toEqual(renderAnthropic(view));
  });

  it('1h breakpoints carry ttl: "1h"; 5m ones the bare marker (5m is the API default)', () => {
    const request = renderAnthropic(compactedSession(), { cacheTtl: '1h' });
    expect(request.system).toEqual([{ type: 'text', text: 'be brief', cache_control: HOUR }]);
    expect(request.messages.flatMap((m) => m.content).filter((b) => b.cache_control)).toEqual([
      expect.objectContaining({ cache_control: HOUR }),
      expect.objectContaining({ cache_control: HOUR }),
    ]);
  });

  it('without a pivot or pins: the system prompt and the last block only', () => {
    const request = renderAnthropic(viewOf([user('u1', 'hi'), assistant('a1', 'hello ')], { system: 'be brief' }), { cacheTtl: '5m' });
    expect(breakpoints(request)).toEqual(['system.0', 'messages.1.content.0']);
    // The final assistant text is still trimmed (a prefill may not end in whitespace).
    expect(request.messages[1].content[0]).toEqual({ type: 'text', text: 'hello', cache_control: EPHEMERAL });
  });

  it('without a system prompt: system stays absent; one marker when the prefix is the whole view', () => {
    const request = renderAnthropic(viewOf([user('u0', 'old'), compacted(1, [msg('s1', 'user', [text('Summary.')])])]), { cacheTtl: '5m' });
    expect(request.system).toBeUndefined();
    expect(breakpoints(request)).toEqual(['messages.0.content.0']);
  });

  it('with the tools of the view, four breakpoints at most, and the request passes the validator', () => {
    const tools = withToolsBreakpoint(renderToolOutputTools('anthropic'), '5m');
    const request = renderAnthropic(compactedSession(), { cacheTtl: '5m' });
    expect(tools.map((t) => t.cache_control)).toEqual([undefined, EPHEMERAL]);
    expect(breakpoints(request).length + 1).toBe(4);
    expect(validateAnthropicRequest({ ...request, tools })).toEqual([]);
  });

  it('satisfies the SDK request params unchanged (system as text blocks, markers on content blocks)', () => {
    const { system, messages } = renderAnthropic(compactedSession(), { cacheTtl: '1h' });
    const params = { model: 'claude-sonnet-4-5', max_tokens: 256, system, messages } satisfies MessageCreateParamsNonStreaming;
    expect(params.messages.length).toBe(3);
  });

  it('renderContext passes the lifetime to the Anthropic format only', () => {
    const view = compactedSession();
    expect(JSON.stringify(renderContext(view, 'anthropic', { cacheTtl: '5m' }))).toContain('cache_control');
    for (const format of ['neutral', 'openai', 'openai-responses', 'ai-sdk'] as const) {
      expect(JSON.stringify(renderContext(view, format, { cacheTtl: '5m' }))).not.toContain('cache_control');
    }
  });
});

describe('validateAnthropicRequest: cache_control', () => {
  const turn = (marks: Array<Record<string, unknown> | undefined>) => ({
    messages: [{ role: 'user', content: marks.map((m, i) => ({ type: 'text', text: `t${i}`, ...(m ? { cache_control: m } : {}) })) }],
  });

  it('refuses a fifth breakpoint', () => {
    expect(validateAnthropicRequest(turn([EPHEMERAL, EPHEMERAL, EPHEMERAL, EPHEMERAL]))).toEqual([]);
    expect(validateAnthropicRequest(turn([EPHEMERAL, EPHEMERAL, EPHEMERAL, EPHEMERAL, EPHEMERAL]))).toEqual([
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    ]);
  });

  it('counts tools, system and blocks nested in tool results', () => {
    const request = {
      tools: [{ name: 'x', input_schema: { type: 'object' }, cache_control: EPHEMERAL }],
      system: [{ type: 'text', text: 's', cache_control: EPHEMERAL }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go', cache_control: EPHEMERAL }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'x', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'r', cache_control: EPHEMERAL }], cache_control: EPHEMERAL }] },
      ],
    };
    expect(validateAnthropicRequest(request)).toEqual(['A maximum of 4 blocks with cache_control may be provided. Found 5.']);
  });

  it('wants type "ephemeral", a ttl of 5m or 1h, nothing else', () => {
    expect(validateAnthropicRequest(turn([HOUR, { type: 'ephemeral', ttl: '5m' }, EPHEMERAL]))).toEqual([]);
    expect(validateAnthropicRequest(turn([{ type: 'persistent' }, { type: 'ephemeral', ttl: '2h' }, { type: 'ephemeral', scope: 'x' }]))).toEqual([
      "messages.0.content.0.cache_control.type: Input should be 'ephemeral'",
      "messages.0.content.1.cache_control.ttl: Input should be '5m' or '1h'",
      'messages.0.content.2.cache_control.scope: Extra inputs are not permitted',
    ]);
  });

  it('refuses a 1h breakpoint after a 5m one, in the order tools, system, messages', () => {
    const request = { system: [{ type: 'text', text: 's', cache_control: EPHEMERAL }], ...turn([HOUR]) };
    expect(validateAnthropicRequest(request)).toEqual([
      "messages.0.content.0.cache_control: a ttl='1h' breakpoint must not come after a ttl='5m' one (system.0); the order is tools, system, messages",
    ]);
  });

  it('refuses a marker on a block that cannot be cached', () => {
    const request = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', cache_control: EPHEMERAL }, { type: 'text', text: 'ok' }] },
      ],
    };
    expect(validateAnthropicRequest(request)).toEqual(['messages.1.content.0.cache_control: thinking blocks cannot be cached']);
  });
});
