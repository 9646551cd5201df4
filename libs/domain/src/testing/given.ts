import { DomainError } from '../errors';
import { errorOf } from './expect-domain-error';

/**
 * A decider's spec in its three steps: `given` the state (or `givenEvents`,
 * the events folded into it), `when` it decides, `then` what it returns, or
 * `thenFails` with the domain error it throws. A failing step says which.
 */
export function given<S>(state: S) {
  return {
    when<R>(decide: (state: S) => R) {
      return {
        then(expected: R): void {
          expect(decide(state)).toEqual(expected);
        },
        thenFails(code: string, details?: DomainError['details']): void {
          const error = errorOf(() => decide(state));
          expect(details === undefined ? error.code : { code: error.code, details: error.details }).toEqual(details === undefined ? code : { code, details });
        },
      };
    },
  };
}

/** `given` the state a log of events folds to (a decider's `evolve` over its initial state). */
export const givenEvents = <S, E>(initial: S, evolve: (state: S, event: E) => S, events: readonly E[]) => given(events.reduce(evolve, initial));
