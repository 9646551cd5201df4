import { readBudget } from './session-view';

describe('the budget of a read', () => {
  it("given a trigger that reserves no output (a ratio trigger on the whole window), then the read still leaves the model's output room, at most 32,000", () => {
    expect(readBudget({ context: 200_000, output: 64_000 }, 200_000)).toBe(168_000);
    expect(readBudget({ context: 200_000, output: 8_192 }, 200_000)).toBe(191_808);
  });

  it('given an input limit, then that is the cap', () => {
    expect(readBudget({ context: 400_000, input: 272_000, output: 128_000 }, 400_000)).toBe(272_000);
  });

  it("given a usable window below both, then it is the usable window (the trigger's own reserve)", () => {
    expect(readBudget({ context: 200_000, output: 8_000 }, 150_000)).toBe(150_000);
  });
});
