import type { components } from './schema';

/** The service's `application/problem+json` body. */
export type Problem = components['schemas']['Problem'];
/** Every code the service documents. */
export type ProblemCode = Problem['code'];

/** What stands in for a problem when the answer was not one (a proxy's error page, a body cut short). */
export interface UnexpectedResponse {
  type: 'about:blank';
  title: string;
  status: number;
  code: 'unexpected_response';
  detail: string;
}

/** A non-2xx answer. `isProblem(error, code)` narrows it by code. */
export class ProblemError<C extends ProblemCode | 'unexpected_response' = ProblemCode | 'unexpected_response'> extends Error {
  override readonly name = 'ProblemError';
  readonly status: number;
  readonly code: C;

  constructor(
    readonly problem: (Problem & { code: C }) | (UnexpectedResponse & { code: C }),
    /** The answer's headers (Retry-After, X-Request-Id…). */
    readonly headers: Headers,
  ) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
  }
}

function isProblemBody(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && 'code' in body && typeof body.code === 'string' && 'status' in body && typeof body.status === 'number';
}

/** The error for a non-2xx answer whose body has been read (as JSON when it parsed, else text). */
export function problemError(response: Response, body: unknown): ProblemError {
  if (isProblemBody(body)) return new ProblemError(body, response.headers);
  const detail = typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${response.status} without a problem body`;
  return new ProblemError({ type: 'about:blank', title: response.statusText, status: response.status, code: 'unexpected_response', detail }, response.headers);
}

/** Reads a non-2xx answer's body into its error. */
export async function readProblem(response: Response): Promise<ProblemError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return problemError(response, body);
}

/** True when `error` is a ProblemError, with this code when one is given. */
export function isProblem<C extends ProblemCode>(error: unknown, code: C): error is ProblemError<C> & { problem: Problem & { code: C } };
export function isProblem(error: unknown): error is ProblemError;
export function isProblem(error: unknown, code?: ProblemCode): boolean {
  return error instanceof ProblemError && (code === undefined || error.code === code);
}
