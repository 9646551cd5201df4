import { HttpException } from '@nestjs/common';
import type { Response } from 'express';
import { DatabaseUnavailableError } from '@app/database';
import { DomainError, DomainErrorKind } from '@app/domain';

/** RFC 9457 problem details with our stable `code`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  /** Seconds; sent as the Retry-After header too (429, 503). */
  retryAfter?: number;
  [extension: string]: unknown;
}

/** What a client is told to wait after a 503 for a database outage: a restart takes seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const STATUS: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function problem(status: number, code: string, detail: string, extensions: Record<string, unknown> = {}): Problem {
  return { type: `https://session-store.dev/problems/${code}`, title: TITLES[status] ?? 'Error', status, code, detail, ...extensions };
}

/** body-parser errors carry `type` and `status`; they happen before Nest sees the request. */
function bodyParserProblem(error: { type?: string; status?: number; message?: string }): Problem | undefined {
  switch (error.type) {
    case 'entity.too.large':
      return problem(413, 'body_too_large', 'The request body (after decompression) exceeds the limit');
    case 'entity.parse.failed':
      return problem(400, 'invalid_json', 'The request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return problem(415, 'unsupported_encoding', error.message ?? 'Unsupported content encoding');
    case 'request.aborted':
      return problem(400, 'request_aborted', 'The client aborted the request');
    default:
      if (!error.status || error.status < 400 || error.status >= 500) return undefined;
      // A corrupt gzip/deflate/br stream reaches us as a bare zlib error given status 400 and no type.
      return error.type
        ? problem(error.status, error.type.replace(/\W/g, '_'), error.message ?? 'Bad request')
        : problem(error.status, 'invalid_body', 'The request body could not be read or decoded');
  }
}

/** Maps anything thrown while serving a request to a problem; unknown errors become an opaque 500. */
export function toProblem(error: unknown): Problem {
  if (error instanceof DatabaseUnavailableError) {
    return problem(503, 'database_unavailable', 'The database cannot be reached right now; retry shortly', {
      retryAfter: DATABASE_RETRY_AFTER_SECONDS,
    });
  }
  if (error instanceof DomainError) {
    // Every 503 tells the client when to come back, also where the thrower named no figure.
    const details = error.kind === 'unavailable' && error.details.retryAfter === undefined ? { ...error.details, retryAfter: DATABASE_RETRY_AFTER_SECONDS } : error.details;
    return problem(STATUS[error.kind], error.code, error.message, details);
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const response = error.getResponse();
    const detail = typeof response === 'string' ? response : String((response as { message?: unknown }).message ?? error.message);
    const code = status === 404 ? 'route_not_found' : (TITLES[status] ?? 'error').toLowerCase().replace(/\W+/g, '_');
    return problem(status, code, detail);
  }
  if (typeof error === 'object' && error !== null) {
    const fromParser = bodyParserProblem(error as { type?: string });
    if (fromParser) return fromParser;
  }
  return problem(500, 'internal_error', 'An unexpected error occurred');
}

/** Writes a problem response; the request's id goes in the body too, so a client can quote it in a report. */
export function sendProblem(response: Response, body: Problem): void {
  const requestId = response.getHeader('X-Request-Id');
  const withId = typeof requestId === 'string' ? { ...body, requestId } : body;
  if (body.retryAfter !== undefined) response.setHeader('Retry-After', String(Math.max(1, Math.ceil(body.retryAfter))));
  response.status(body.status).type('application/problem+json').send(JSON.stringify(withId));
}
