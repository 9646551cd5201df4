import { SingleFlight } from './single-flight';

const deferred = <V>() => {
  let resolve!: (value: V) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<V>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe('SingleFlight', () => {
  it('given a load under way for a key, when the key is asked again, then the one load answers both', async () => {
    const flight = new SingleFlight<string>();
    const load = deferred<string>();
    let loads = 0;
    const run = () => flight.run('k', () => (loads++, load.promise));
    const [a, b] = [run(), run()];
    load.resolve('v');
    expect(await Promise.all([a, b])).toEqual(['v', 'v']);
    expect(loads).toBe(1);
  });

  it('given a load that finished, when the key is asked again, then it loads anew', async () => {
    const flight = new SingleFlight<number>();
    let loads = 0;
    await flight.run('k', async () => ++loads);
    expect(await flight.run('k', async () => ++loads)).toBe(2);
  });

  it('given a load that failed, when the key is asked again, then the failure is not kept', async () => {
    const flight = new SingleFlight<string>();
    const failing = deferred<string>();
    const first = flight.run('k', () => failing.promise);
    failing.reject(new Error('down'));
    await expect(first).rejects.toThrow('down');
    expect(await flight.run('k', async () => 'back')).toBe('back');
  });

  it('given loads of two keys, when both run, then each has its own', async () => {
    const flight = new SingleFlight<string>();
    expect(await Promise.all([flight.run('a', async () => 'A'), flight.run('b', async () => 'B')])).toEqual(['A', 'B']);
  });
});
