import type { NextFunction, Request, Response } from 'express';
import { routeTemplate } from '../http/request-logging';
import { Metrics } from './metrics';

/**
 * Times every request; labels use the route template, never the ids in the
 * path ('unmatched' when no route took it). A middleware rather than a Nest
 * interceptor: a global interceptor puts every request through Nest's RxJS
 * pipeline, about 3% of the API's CPU on a small append (docs/benchmarks.md).
 */
export function timeRequests(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const stop = metrics.requestSeconds.startTimer();
    res.once('finish', () => stop({ method: req.method, route: routeTemplate(req), status: res.statusCode }));
    next();
  };
}
