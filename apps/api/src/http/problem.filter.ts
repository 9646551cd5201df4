import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { sendProblem, toProblem } from './problem';

@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problem');

  catch(error: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const body = toProblem(error);
    // An outage is one line per request, not a stack trace each: the cause is known and the client retries.
    if (body.code === 'database_unavailable') this.logger.warn(error instanceof Error ? error.message : String(error));
    else if (body.status >= 500) this.logger.error(error instanceof Error ? error.stack : String(error));
    if (response.headersSent) return;
    sendProblem(response, body);
  }
}
