import { DomainError } from '../errors';

/** The DomainError `work` throws (fails the test when it throws nothing or something else). */
export function errorOf(work: () => unknown): DomainError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}
