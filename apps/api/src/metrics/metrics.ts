import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { JobDispatcher, registerQueueDepth } from '@app/queue';

/**
 * The API's Prometheus registry: request latency by route, appended events
 * (AppendCommitted's), and, read from BullMQ on each scrape, the job counts
 * of every queue.
 */
@Injectable()
export class Metrics implements OnModuleDestroy {
  readonly registry = new Registry();

  readonly requestSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor(dispatcher: JobDispatcher) {
    collectDefaultMetrics({ register: this.registry });
    registerQueueDepth(this.registry, dispatcher);
  }

  onModuleDestroy(): void {
    this.registry.clear();
  }
}
