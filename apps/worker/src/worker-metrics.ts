import { Inject, Injectable } from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Database } from '@app/database';
import { JobDispatcher, registerQueueDepth } from '@app/queue';
import { SWEEPER_DB } from './worker-db';

/**
 * The worker's Prometheus registry, served on its own port: jobs by queue
 * and outcome, their durations, queue depth, and the outbox backlog (rows
 * committed but not yet handed to BullMQ, and the age of the oldest).
 */
@Injectable()
export class WorkerMetrics {
  readonly registry = new Registry();

  private readonly jobs = new Counter({
    name: 'session_store_worker_jobs_total',
    help: 'Jobs finished by this worker, by queue and outcome (completed, failed, stalled)',
    labelNames: ['queue', 'outcome'],
    registers: [this.registry],
  });

  private readonly duration = new Histogram({
    name: 'session_store_worker_job_duration_seconds',
    help: 'Time from a job starting on this worker to its end, by queue and outcome',
    labelNames: ['queue', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  constructor(dispatcher: JobDispatcher, @Inject(SWEEPER_DB) sweeperDb: Database) {
    collectDefaultMetrics({ register: this.registry });
    registerQueueDepth(this.registry, dispatcher);
    let backlog = { rows: 0, oldestSeconds: 0 };
    const readBacklog = async () => {
      const [row] = await sweeperDb.systemTx((tx) =>
        tx.query(`SELECT count(*) AS rows, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS oldest FROM outbox WHERE dispatched_at IS NULL`),
      );
      backlog = { rows: Number(row.rows), oldestSeconds: Number(row.oldest) };
    };
    new Gauge({
      name: 'session_store_outbox_backlog',
      help: 'Outbox rows committed but not yet enqueued in BullMQ',
      registers: [this.registry],
      async collect() {
        await readBacklog().catch(() => undefined);
        this.set(backlog.rows);
      },
    });
    new Gauge({
      name: 'session_store_outbox_oldest_age_seconds',
      help: 'Age of the oldest outbox row not yet enqueued (0 when none)',
      registers: [this.registry],
      collect() {
        this.set(backlog.oldestSeconds);
      },
    });
  }

  /** Counts and times every job this worker finishes. */
  observe(worker: Worker, queue: string): void {
    const record = (job: Job | undefined, outcome: 'completed' | 'failed') => {
      this.jobs.inc({ queue, outcome });
      if (job?.processedOn) this.duration.observe({ queue, outcome }, (Date.now() - job.processedOn) / 1000);
    };
    worker.on('completed', (job) => record(job, 'completed'));
    worker.on('failed', (job) => record(job, 'failed'));
    worker.on('stalled', () => this.jobs.inc({ queue, outcome: 'stalled' }));
  }
}
