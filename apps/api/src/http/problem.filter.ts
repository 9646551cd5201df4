import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { toProblem } from './problem';

@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problem');

  catch(error: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const body = toProblem(error);
    if (body.status >= 500) this.logger.error(error instanceof Error ? error.stack : String(error));
    if (response.headersSent) return;
    response.status(body.status).type('application/problem+json').send(JSON.stringify(body));
  }
}
