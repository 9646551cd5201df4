import type { NextFunction, Request, Response } from 'express';

/**
 * Headers every answer carries, set before any route runs so problems,
 * streams and downloads get them too. `/v1/` answers hold session content or
 * secrets (a new API key): no cache, shared or private, may keep them.
 */
export function securityHeaders() {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('x-content-type-options', 'nosniff');
    // Express matches routes case-insensitively, so /V1/… reaches the same handlers.
    if (/^\/v1\//i.test(req.path)) res.setHeader('cache-control', 'no-store');
    next();
  };
}
