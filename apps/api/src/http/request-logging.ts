import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { LogFields } from '@app/logging';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** A client's id is kept when it is a plain token; anything else is replaced, never echoed. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

type LoggedRequest = Request & { logFields?: LogFields };

/** Probes would drown the log; their metrics still count them. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The route template that took the request (ids never appear), or 'unmatched'; known once routing ran. */
export function routeTemplate(req: Request): string {
  return (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
}

/**
 * First middleware: gives the request its id (the client's `X-Request-Id`
 * or a new UUID), echoes it, and writes one line when the response is done:
 * request id, tenant, session, method, route template, status, duration.
 * Headers and bodies are never logged (they carry keys).
 */
export function requestIdAndLog(logger: Logger) {
  return (req: LoggedRequest, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const fields: LogFields = { requestId };
    req.logFields = fields;
    const started = process.hrtime.bigint();
    res.once('close', () => {
      if (QUIET_PATHS.has(req.path) && res.statusCode < 500) return;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        ...fields,
        method: req.method,
        route: routeTemplate(req),
        status: res.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
        aborted: !res.writableFinished || undefined,
      };
      if (res.statusCode >= 500) logger.error(line, 'request failed');
      else logger.info(line, 'request completed');
    });
    next();
  };
}

/**
 * Adds fields to the request's log line (learned later, e.g. the tenant
 * after authentication). The API passes a request's fields explicitly, not
 * through AsyncLocalStorage: its promise hooks cost every request about a
 * tenth of its CPU (docs/decisions.md, "Round trips, pass-through reads and
 * memory").
 */
export function addRequestLogFields(req: Request, fields: LogFields): void {
  Object.assign((req as LoggedRequest).logFields ?? {}, fields);
}

/** The request's log fields (request id, tenant, session), for a line written about it elsewhere. */
export function requestLogFields(req: Request): LogFields {
  return (req as LoggedRequest).logFields ?? {};
}
