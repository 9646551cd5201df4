/**
 * Pacing background work: given runs of some length / when the next run
 * comes / then it waits so that the work keeps its share of wall time.
 */
import { DutyCycle, PacingClock } from './duty-cycle';

/** A clock that only moves when told: work advances it by its length, sleeps by theirs. */
function manualClock() {
  let t = 1_000;
  const slept: number[] = [];
  const clock: PacingClock = {
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
  const work = (ms: number) => async () => {
    t += ms;
    return ms;
  };
  return { clock, slept, work, advance: (ms: number) => (t += ms), now: () => t };
}

describe('DutyCycle', () => {
  it('given a first run, then it starts at once', async () => {
    const c = manualClock();
    await expect(new DutyCycle(0.1, 60_000, c.clock).run(c.work(5))).resolves.toBe(5);
    expect(c.slept).toEqual([]);
  });

  it('given a share of 10 %, when runs follow each other, then each waits nine times the previous run', async () => {
    const c = manualClock();
    const duty = new DutyCycle(0.1, 60_000, c.clock);
    const start = c.now();
    for (const ms of [10, 20, 40]) await duty.run(c.work(ms));
    expect(c.slept).toEqual([90, 180]);
    // Work 70 ms of 340 ms elapsed before the next may start: the last pause (360) brings it to 10 %.
    expect(70 / (c.now() - start + 360)).toBeCloseTo(0.1);
  });

  it('given a pause already over when the next run comes, then no wait', async () => {
    const c = manualClock();
    const duty = new DutyCycle(0.25, 60_000, c.clock);
    await duty.run(c.work(8));
    c.advance(30);
    await duty.run(c.work(8));
    expect(c.slept).toEqual([]);
    c.advance(10);
    await duty.run(c.work(1));
    expect(c.slept).toEqual([14]);
  });

  it('given a run that fails, then the next still waits for its share', async () => {
    const c = manualClock();
    const duty = new DutyCycle(0.5, 60_000, c.clock);
    await expect(
      duty.run(async () => {
        c.advance(12);
        throw new Error('database gone');
      }),
    ).rejects.toThrow('database gone');
    await duty.run(c.work(1));
    expect(c.slept).toEqual([12]);
  });

  it('given a run slowed by waiting, then its pause is capped', async () => {
    const c = manualClock();
    const duty = new DutyCycle(0.1, 5_000, c.clock);
    await duty.run(c.work(30_000));
    await duty.run(c.work(1));
    expect(c.slept).toEqual([5_000]);
  });

  it('given a share of 1, then runs never wait', async () => {
    const c = manualClock();
    const duty = new DutyCycle(1, 60_000, c.clock);
    for (const ms of [10, 10, 10]) await duty.run(c.work(ms));
    expect(c.slept).toEqual([]);
  });

  it('given an abort while waiting, then the run does not start', async () => {
    // A real clock: a 2 ms run at a share of 0.1 % asks for a 2 s pause.
    const duty = new DutyCycle(0.001, 60_000);
    await duty.run(async () => {
      const t = performance.now();
      while (performance.now() - t < 2);
    });
    const controller = new AbortController();
    const ran = jest.fn();
    const pending = duty.run(async () => ran(), controller.signal);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    expect(ran).not.toHaveBeenCalled();
  });
});
