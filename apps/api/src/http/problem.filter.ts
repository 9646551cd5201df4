import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { sendProblem, toProblem } from './problem';
import { requestLogFields } from './request-logging';
import { REFUSED_BODY_DRAIN, settleUnreadBody } from './request-body';

@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const body = toProblem(error);
    const fields = { ...requestLogFields(request), context: 'Problem' };
    // An outage is one line per request, not a stack trace each: the cause is known and the client retries.
    if (body.code === 'database_unavailable') this.logger.warn(fields, error instanceof Error ? error.message : String(error));
    else if (body.status >= 500) this.logger.error({ ...fields, stack: error instanceof Error ? error.stack : undefined }, error instanceof Error ? error.message : String(error));
    if (response.headersSent) return;
    // Refused before its body was read (bad credentials, a limit): answered after a short drain, and the connection closed.
    void settleUnreadBody(request, response, REFUSED_BODY_DRAIN).then(() => {
      if (!response.headersSent) sendProblem(response, body);
    });
  }
}
