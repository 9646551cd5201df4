import { FITTED_NOTICE_KIND, fitView } from './fit';
import { renderAnthropic, renderOpenAIChat, renderOpenAIResponses } from './render';
import { assistant, call, compacted, EventDraft, msg, result, text, tool, usage, user, viewOf } from './testing/events';
import { ModelView } from './types';
import { validateAnthropicRequest, validateOpenAIChatMessages, validateOpenAIResponsesInput } from './validate';

/** A turn: the user asks, the assistant calls a tool, the result is `size` characters. */
const turn = (n: number, size: number): EventDraft[] => [
  user(`u${n}`, `step ${n}: look at the next file`),
  assistant(`a${n}`, call(`c${n}`)),
  tool(`t${n}`, result(`c${n}`, 'x'.repeat(size), { outputRef: { id: `ref-${n}`, byte_size: size, line_count: 1 } })),
];
const session = (turns: number, size: number) => Array.from({ length: turns }, (_, i) => turn(i + 1, size)).flat();

const rulesBroken = (view: ModelView) =>
  validateAnthropicRequest(renderAnthropic(view)).length +
  validateOpenAIChatMessages(renderOpenAIChat(view)).length +
  validateOpenAIResponsesInput(renderOpenAIResponses(view)).length;

const outputs = (view: ModelView) =>
  view.messages.flatMap((message) => message.parts).flatMap((part) => (part.type === 'tool_result' ? [part.output] : []));

describe('fitting a view to the usable window', () => {
  it('given a view within the budget, when fitted, then it is returned as is', () => {
    const view = viewOf(session(3, 400));
    expect(fitView(view, view.tokens.estimated)).toEqual({ view, fitted: null });
  });

  describe('given a view over the budget by its old tool outputs', () => {
    const view = viewOf(session(6, 4_000));
    const budget = view.tokens.estimated - 2_500;
    const { view: fitted, fitted: fit } = fitView(view, budget);

    it('when fitted, then the oldest outputs become the placeholder with their ref, and nothing is dropped', () => {
      expect(fit).toMatchObject({ tokensBefore: view.tokens.estimated, clearedOutputs: 3, droppedThroughSeq: null });
      expect(outputs(fitted).slice(0, 3)).toEqual(['[tool output trimmed; ref=ref-1]', '[tool output trimmed; ref=ref-2]', '[tool output trimmed; ref=ref-3]']);
      expect(outputs(fitted).slice(3)).toEqual(['x'.repeat(4_000), 'x'.repeat(4_000), 'x'.repeat(4_000)]);
      expect(fitted.messages).toHaveLength(view.messages.length);
    });

    it("then its figure is within the budget and is the sum of its messages' figures", () => {
      expect(fitted.tokens.estimated).toBeLessThanOrEqual(budget);
      expect(fitted.tokens.estimated).toBe(fitted.sources.reduce((sum, source) => sum + source.tokens, 0));
    });
  });

  describe('given a view over the budget even with every old output cleared', () => {
    const drafts = [...session(2, 400), ...Array.from({ length: 8 }, (_, i) => user(`long${i}`, 'y'.repeat(4_000))), ...turn(9, 400)];
    const view = viewOf(drafts);
    const budget = 2_000;
    const { view: fitted, fitted: fit } = fitView(view, budget);

    it('when fitted, then the oldest messages are dropped and a notice says through which seq', () => {
      expect(fit!.droppedThroughSeq).toBeGreaterThan(0);
      expect(fitted.tokens.estimated).toBeLessThanOrEqual(budget);
      expect(fitted.messages[0]).toMatchObject({ role: 'user', metadata: { kind: FITTED_NOTICE_KIND } });
      expect((fitted.messages[0].parts[0] as { text: string }).text).toContain(`through seq ${fit!.droppedThroughSeq}`);
    });

    it('then the newest turn is kept whole and every provider accepts the view', () => {
      expect(fitted.messages.slice(-3).map((message) => message.id)).toEqual(['u9', 'a9', 't9']);
      expect(rulesBroken(fitted)).toBe(0);
    });
  });

  it('given an agent loop of many tool steps in one turn, when messages are dropped, then no call is split from its result', () => {
    const steps = Array.from({ length: 10 }, (_, i) => [assistant(`a${i}`, text(`step ${i} ${'w'.repeat(1_600)}`), call(`c${i}`)), tool(`t${i}`, result(`c${i}`, 'z'.repeat(2_000)))]).flat();
    const view = viewOf([user('u', 'fix the build'), ...steps]);
    const { view: fitted, fitted: fit } = fitView(view, 1_200);
    expect(fit!.droppedThroughSeq).not.toBeNull();
    expect(fitted.tokens.estimated).toBeLessThanOrEqual(1_200);
    expect(rulesBroken(fitted)).toBe(0);
    const calls = fitted.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool_call').map((p) => (p as { callId: string }).callId);
    const results = fitted.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool_result').map((p) => (p as { callId: string }).callId);
    expect(results).toEqual(calls);
  });

  it("given a pivot's prefix, when the window is fitted, then the prefix stays as it was", () => {
    const summary = msg('p1', 'user', [text('summary of earlier work')]);
    const view = viewOf([...session(2, 400), compacted(6, [summary]), ...session(6, 4_000).map((d) => d)]);
    const { view: fitted } = fitView(view, 1_500);
    expect(fitted.messages[0]).toEqual(summary);
    expect(rulesBroken(fitted)).toBe(0);
  });

  it("given a provider usage far above the estimate, when fitted, then the figure fitted is the provider's", () => {
    const drafts = session(6, 4_000);
    const view = viewOf([...drafts, usage(30_000, 100)]);
    expect(view.tokens.estimated).toBe(30_100);
    const { view: fitted } = fitView(view, 25_000);
    expect(fitted.tokens.estimated).toBeLessThanOrEqual(25_000);
    expect(fitted.tokens.estimated).toBe(30_100 - (view.sources.reduce((s, x) => s + x.tokens, 0) - fitted.sources.reduce((s, x) => s + x.tokens, 0)));
  });
});

describe('fitting a view that cannot fit', () => {
  it("given a figure made of the provider's overhead, when fitted, then no message is traded for a longer notice", () => {
    const view = viewOf([user('u1', 'hi'), assistant('a1', 'hello'), usage(80_000, 0)]);
    const { view: fitted, fitted: fit } = fitView(view, 68_000);
    expect(fit).toEqual({ tokensBefore: 80_000, clearedOutputs: 0, droppedThroughSeq: null });
    expect(fitted.messages).toEqual(view.messages);
    expect(fitted.tokens.estimated).toBe(80_000);
  });
});

describe('fitting a view whose overhead alone is over the budget', () => {
  it('given 20k tokens of turns and a provider count of 90k against 68k, when fitted, then no turn is dropped for nothing', () => {
    const turns = Array.from({ length: 10 }, (_, i) => [user(`u${i}`, 'q'.repeat(4_000)), assistant(`a${i}`, 'r'.repeat(4_000))]).flat();
    const view = viewOf([...turns, usage(88_000, 2_000)]);
    const { view: fitted, fitted: fit } = fitView(view, 68_000);
    expect(fit).toMatchObject({ droppedThroughSeq: null });
    expect(fitted.messages).toEqual(view.messages);
  });
});

describe('fitting a view with a pending call', () => {
  it('given the newest call still running (its aborted result is synthetic), when fitted, then the newest real output is the one kept', () => {
    const asked = (n: number) => [user(`u${n}`, 'ask '.repeat(250)), ...turn(n, 4_000).slice(1)];
    const drafts = [...[1, 2, 3, 4].flatMap(asked), assistant('a-pending', call('c-pending'))];
    const view = viewOf(drafts);
    const { view: fitted } = fitView(view, view.tokens.estimated - 3_100);
    const kept = fitted.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool_result' && p.output === 'x'.repeat(4_000));
    expect(kept.map((p) => (p as { callId: string }).callId)).toContain('c4');
  });
});
