import { isUtf8 } from 'node:buffer';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { assertSafeJson, invalid } from '@app/domain';
import { AppConfig } from '@app/config';
import { sendProblem, toProblem } from './problem';

/** A parsed JSON body's raw bytes until the UTF-8 check, then only their count. */
export interface ParsedBodySize {
  rawBody?: Buffer;
  bodyBytes?: number;
}

/**
 * JSON bodies: size limit applied after gzip/deflate inflation, then one
 * UTF-8 check and one iterative pass (depth, NUL, lone surrogates) before
 * any recursive code.
 * Errors here happen before Nest's pipeline, so they get their own handler.
 */
export function installBodyParsing(app: NestExpressApplication, config: AppConfig): void {
  app.useBodyParser('json', { limit: config.http.maxBodyBytes, inflate: true, strict: true });
  app.use((req: Request & ParsedBodySize, _res: Response, next: NextFunction) => {
    try {
      // The parser decodes invalid UTF-8 to U+FFFD, silently altering the text; the raw (inflated) bytes
      // are kept by the app's rawBody option so this can be refused instead.
      if (req.rawBody !== undefined) {
        if (!isUtf8(req.rawBody)) throw invalid('invalid_utf8', 'The request body is not valid UTF-8');
        // Only their count is needed from here on (the tenant's byte budget): a large body's copy is not held for the whole request.
        req.bodyBytes = req.rawBody.length;
        req.rawBody = undefined;
      }
      if (req.body !== undefined) assertSafeJson(req.body, { maxDepth: config.http.maxJsonDepth });
      next();
    } catch (error) {
      next(error);
    }
  });
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    sendProblem(res, toProblem(error));
  });
}
