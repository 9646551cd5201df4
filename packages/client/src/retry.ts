/** A fetch that takes a ready Request, as openapi-fetch calls it. */
export type RequestSender = (request: Request) => Promise<Response>;

/** The service's two "try again later" answers: rate limits (429) and a dependency outage (503). */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** Requests the server may receive twice without harm, so a network error (answer lost or never sent) is retried. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 8_000;
/** A longer Retry-After is the server asking for more patience than a request should hold on for: the caller gets the answer. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** RFC 9110 IMF-fixdate, the HTTP-date form servers send (`Wed, 21 Oct 2026 07:28:00 GMT`). */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Retry-After in milliseconds from now: delay-seconds or an HTTP-date; undefined when absent or malformed. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random,
 * so clients that failed together do not come back together, yet none retries at once.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.round(step / 2 + (random() * step) / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wraps a sender so that 429 and 503 answers are retried after their
 * Retry-After (else a backoff), at most `retries` times, and network errors
 * too when the request is safe to repeat: an idempotent method, or one
 * carrying an Idempotency-Key (the service then answers a repeat with the
 * first answer). Other answers, 4xx included, come back as they are. The
 * request's body must be replayable (not a one-shot stream): each attempt
 * sends a clone.
 */
export function retrying(send: RequestSender, retries: number): RequestSender {
  return async (request) => {
    const repeatable = IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await send(last ? request : request.clone());
      } catch (error) {
        if (last || !repeatable || request.signal.aborted) throw error;
        await sleep(backoffDelay(attempt), request.signal);
        continue;
      }
      // A 429 is refused before any work; a 503 may follow a commit whose answer was lost, so only a repeatable request retries it.
      if (last || !RETRIED_STATUSES.has(response.status) || (response.status === 503 && !repeatable)) return response;
      const wait = parseRetryAfter(response.headers.get('retry-after')) ?? backoffDelay(attempt);
      if (wait > MAX_RETRY_AFTER_MS) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
