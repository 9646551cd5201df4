import { FilePart } from '../events';
import { prunedPlaceholder, trimmedPlaceholder } from '../placeholders';
import { assistant, call, compacted, msg, pruned, result, tool, user, viewOf } from './testing/events';
import { defaultContextBudgetTokens } from './trim';

const ref = (id: string) => ({ id, byte_size: 400, line_count: 1 });
const image: FilePart = { type: 'file', mediaType: 'image/png', data: 'aGVsbG8=' };
/** A turn whose output is `tokens` tokens by the budget's measure (4 chars each). */
const turn = (n: number, tokens: number) => [
  assistant(`a${n}`, call(`c${n}`)),
  tool(`t${n}`, result(`c${n}`, 'x'.repeat(tokens * 4), { outputRef: ref(`r${n}`) })),
];
const outputs = (view: ReturnType<typeof viewOf>) =>
  view.messages.flatMap((m) => m.parts).flatMap((p) => (p.type === 'tool_result' ? [p.output.startsWith('[') ? p.output : 'full'] : []));

describe('defaultContextBudgetTokens', () => {
  it.each([
    [0, 20_000],
    [8_192, 20_000],
    [128_000, 32_000],
    [200_000, 50_000],
    [1_000_000, 60_000],
  ])('window %d gives %d', (window, budget) => {
    expect(defaultContextBudgetTokens(window)).toBe(budget);
  });
});

describe('view-time trim', () => {
  it('leaves outputs alone within the budget', () => {
    const view = viewOf([...turn(1, 100), ...turn(2, 100)], { contextBudgetTokens: 200 });
    expect(outputs(view)).toEqual(['full', 'full']);
    expect(view.trimmedCallIds).toEqual([]);
    expect(view.toolOutputTokens).toBe(200);
  });

  it('trims the oldest outputs beyond the budget to the placeholder with their ref, newest kept', () => {
    const view = viewOf([...turn(1, 100), ...turn(2, 100), ...turn(3, 100)], { contextBudgetTokens: 250 });
    expect(outputs(view)).toEqual([trimmedPlaceholder('r1'), 'full', 'full']);
    expect(view.trimmedCallIds).toEqual(['c1']);
    expect(view.toolOutputTokens).toBe(200);
  });

  it('drops the attachments of a trimmed output', () => {
    const view = viewOf(
      [assistant('a1', call('c1')), tool('t1', result('c1', 'shot', { attachments: [image] })), ...turn(2, 100)],
      { contextBudgetTokens: 150 },
    );
    expect(view.messages[1].parts).toEqual([result('c1', trimmedPlaceholder())]);
  });

  it('keeps a strict newest suffix: once one output does not fit, older small ones go too', () => {
    const view = viewOf([...turn(1, 10), ...turn(2, 500), ...turn(3, 10)], { contextBudgetTokens: 100 });
    expect(outputs(view)).toEqual([trimmedPlaceholder('r1'), trimmedPlaceholder('r2'), 'full']);
  });

  it('always keeps the newest output, even alone over the budget', () => {
    const view = viewOf([...turn(1, 10), ...turn(2, 500)], { contextBudgetTokens: 100 });
    expect(outputs(view)).toEqual([trimmedPlaceholder('r1'), 'full']);
  });

  it('does not count or touch pruned results', () => {
    const view = viewOf([...turn(1, 100), ...turn(2, 100), pruned(['c2']), ...turn(3, 100)], { contextBudgetTokens: 200 });
    expect(outputs(view)).toEqual(['full', prunedPlaceholder('r2'), 'full']);
  });

  it('leaves the pivot prefix as the compaction built it', () => {
    const prefix = [msg('p1', 'assistant', [call('k1')]), msg('p2', 'tool', [result('k1', 'y'.repeat(4_000))])];
    const view = viewOf([user('u0', 'old'), compacted(1, prefix), ...turn(1, 100)], { contextBudgetTokens: 50 });
    expect(outputs(view)).toEqual(['full', 'full']);
  });
});

describe('view-time trim in steps (trimStep)', () => {
  const tenTurns = Array.from({ length: 10 }, (_, i) => turn(i + 1, 100)).flat();
  /** The trimmed call ids after each of the first n turns. */
  const trimsAlong = (n: number, trimStep: number) =>
    Array.from({ length: n }, (_, i) => viewOf(tenTurns.slice(0, 2 * (i + 1)), { contextBudgetTokens: 400, trimStep }).trimmedCallIds.length);

  it('step 0 is seed 000: the start moves at every result once over the budget', () => {
    expect(trimsAlong(10, 0)).toEqual([0, 0, 0, 0, 1, 2, 3, 4, 5, 6]);
  });

  it('a step frees a step’s worth at once, so the start moves once per step of output', () => {
    // given a budget of 400 and a step of a half: a move keeps at most 200 of the 500 over it
    // then the start moves at the 5th and the 8th result, three outputs at a time
    expect(trimsAlong(10, 0.5)).toEqual([0, 0, 0, 0, 3, 3, 3, 6, 6, 6]);
  });

  it('the newest output stays even when it alone exceeds what a move keeps', () => {
    const view = viewOf([...turn(1, 100), ...turn(2, 500)], { contextBudgetTokens: 400, trimStep: 0.5 });
    expect(outputs(view)).toEqual([trimmedPlaceholder('r1'), 'full']);
    expect(view.toolOutputTokens).toBe(500);
  });
});
