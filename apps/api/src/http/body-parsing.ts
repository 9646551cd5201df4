import { isUtf8 } from 'node:buffer';
import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { APP_CONFIG, AppConfig } from '@app/config';
import { assertSafeJson, invalid } from '@app/domain';
import { sendProblem, toProblem } from './problem';

/** A parsed JSON body's raw bytes until the UTF-8 check, then only their count. */
export interface ParsedBodySize {
  rawBody?: Buffer;
  bodyBytes?: number;
}

/**
 * JSON bodies, read only once the request is authenticated: the guards
 * (ApiKeyGuard, AdminGuard) call `read` after accepting the credentials, and
 * ReadJsonBody does it for every other route, after any guard. A request
 * refused before then is answered without its body being read (see
 * ProblemFilter). Reading it takes at most HTTP_REQUEST_TIMEOUT_MS, Node's
 * bound on receiving a whole request (408, connection closed).
 *
 * Size limit applied after gzip/deflate inflation, then one UTF-8 check and
 * one iterative pass (depth, NUL, lone surrogates) before any recursive code.
 * Other media types (the streamed uploads) are left unread for their handler.
 */
@Injectable()
export class JsonBodyReader {
  private readonly parse: RequestHandler;
  private readonly readings = new WeakMap<Request, Promise<void>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.parse = json({
      limit: config.http.maxBodyBytes,
      inflate: true,
      strict: true,
      // The parser decodes invalid UTF-8 to U+FFFD, silently altering the text; the raw (inflated) bytes are kept so this can be refused instead.
      verify: (req, _res, raw) => {
        (req as ParsedBodySize).rawBody = raw;
      },
    });
  }

  /** Reads and checks the body once per request; later calls share the first one's outcome. */
  read(req: Request & ParsedBodySize, res: Response): Promise<void> {
    let reading = this.readings.get(req);
    if (!reading) {
      reading = new Promise<void>((resolve, reject) => this.parse(req, res, (error?: unknown) => (error ? reject(error) : resolve()))).then(() => this.check(req));
      this.readings.set(req, reading);
    }
    return reading;
  }

  private check(req: Request & ParsedBodySize): void {
    if (req.rawBody !== undefined) {
      if (!isUtf8(req.rawBody)) throw invalid('invalid_utf8', 'The request body is not valid UTF-8');
      // Only their count is needed from here on (the tenant's byte budget): a large body's copy is not held for the whole request.
      req.bodyBytes = req.rawBody.length;
      req.rawBody = undefined;
    }
    if (req.body !== undefined) assertSafeJson(req.body, { maxDepth: this.config.http.maxJsonDepth });
  }
}

/** Reads the JSON body of routes whose guard did not (unguarded ones), after every guard and before the pipes see `@Body()`. */
@Injectable()
export class ReadJsonBody implements NestInterceptor {
  constructor(private readonly reader: JsonBodyReader) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    return from(this.reader.read(http.getRequest<Request>(), http.getResponse<Response>())).pipe(switchMap(() => next.handle()));
  }
}

/**
 * Installs ReadJsonBody. Errors of the middleware before Nest's pipeline
 * (headers, request ids) get their own handler.
 */
export function installBodyParsing(app: NestExpressApplication): void {
  app.useGlobalInterceptors(app.get(ReadJsonBody));
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    sendProblem(res, toProblem(error));
  });
}
