import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable } from 'rxjs';
import { Metrics } from './metrics';

/** Times every routed request; labels use the route template, never the ids in the path. */
@Injectable()
export class MetricsInterceptor implements NestInterceptor {
  constructor(private readonly metrics: Metrics) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const stop = this.metrics.requestSeconds.startTimer();
    response.once('finish', () =>
      stop({ method: request.method, route: (request.route as { path?: string } | undefined)?.path ?? 'unmatched', status: response.statusCode }),
    );
    return next.handle();
  }
}
