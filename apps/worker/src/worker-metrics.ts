import { Inject, Injectable } from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Database } from '@app/database';
import { Retention, SESSION_RETENTION_ACTIONS, SessionRetentionAction } from '@app/domain';
import { JobDispatcher, registerQueueDepth } from '@app/queue';
import { SWEEPER_DB } from './worker-db';

/**
 * The worker's Prometheus registry, served on its own port: jobs by queue
 * and outcome, their durations, queue depth, the outbox backlog (rows
 * committed but not yet handed to BullMQ, and the age of the oldest), and
 * the age of the oldest compaction marker still pending, and what each
 * committed compaction kept of its head's critical facts.
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

  private readonly retention = new Histogram({
    name: 'session_store_compaction_retention_ratio',
    help: "Share of the head's critical facts the context holds after a committed compaction (Carried Forward included), by strategy",
    labelNames: ['strategy'],
    buckets: [0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
    registers: [this.registry],
  });

  private readonly summarizerRetention = new Histogram({
    name: 'session_store_compaction_summarizer_retention_ratio',
    help: 'The same share before the retention check carried missing facts forward: what the summarizer kept by itself, by strategy',
    labelNames: ['strategy'],
    buckets: [0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
    registers: [this.registry],
  });

  private readonly carried = new Counter({
    name: 'session_store_compaction_carried_facts_total',
    help: 'Critical facts the retention check added to committed summaries (Carried Forward), by strategy',
    labelNames: ['strategy'],
    registers: [this.registry],
  });

  private readonly retired = new Counter({
    name: 'session_store_retention_sessions_total',
    help: 'Idle sessions the retention job archived or deleted, by action',
    labelNames: ['action'],
    registers: [this.registry],
  });

  constructor(dispatcher: JobDispatcher, @Inject(SWEEPER_DB) sweeperDb: Database) {
    collectDefaultMetrics({ register: this.registry });
    // Both series exist from the start, so a rate over them is defined before the first session expires.
    for (const action of SESSION_RETENTION_ACTIONS) this.retired.inc({ action }, 0);
    registerQueueDepth(this.registry, dispatcher);
    let backlog = { rows: 0, oldestSeconds: 0, markerSeconds: 0 };
    const readBacklog = async () => {
      // A compaction trigger's row stays unsettled until its marker is closed in the log (see the reconciler).
      const [row] = await sweeperDb.systemTx((tx) =>
        tx.query(`
          SELECT count(*) FILTER (WHERE dispatched_at IS NULL) AS rows,
                 coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE dispatched_at IS NULL)), 0) AS oldest,
                 coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE job_name = 'compact' AND settled_at IS NULL)), 0) AS marker
          FROM outbox WHERE dispatched_at IS NULL OR (job_name = 'compact' AND settled_at IS NULL)`),
      );
      backlog = { rows: Number(row.rows), oldestSeconds: Number(row.oldest), markerSeconds: Number(row.marker) };
    };
    // One query per scrape serves the three gauges (they collect concurrently).
    let reading: Promise<void> | undefined;
    let readAt = 0;
    const fresh = () => {
      if (!reading || Date.now() - readAt > 1000) {
        readAt = Date.now();
        reading = readBacklog().catch(() => undefined);
      }
      return reading;
    };
    new Gauge({
      name: 'session_store_outbox_backlog',
      help: 'Outbox rows committed but not yet enqueued in BullMQ',
      registers: [this.registry],
      async collect() {
        await fresh();
        this.set(backlog.rows);
      },
    });
    new Gauge({
      name: 'session_store_outbox_oldest_age_seconds',
      help: 'Age of the oldest outbox row not yet enqueued (0 when none)',
      registers: [this.registry],
      async collect() {
        await fresh();
        this.set(backlog.oldestSeconds);
      },
    });
    new Gauge({
      name: 'session_store_oldest_pending_compaction_age_seconds',
      help: 'Age of the oldest compaction marker not yet closed by a completion or failure (0 when none)',
      registers: [this.registry],
      async collect() {
        await fresh();
        this.set(backlog.markerSeconds);
      },
    });
  }

  /** The retention figures of a compaction this worker committed. */
  observeRetention(strategy: string, retention: Retention): void {
    this.retention.observe({ strategy }, retention.ratio);
    this.summarizerRetention.observe({ strategy }, retention.summarizerRatio);
    this.carried.inc({ strategy }, retention.carried);
  }

  /** Sessions the retention job retired in one committed batch. */
  observeRetired(action: SessionRetentionAction, count: number): void {
    if (count > 0) this.retired.inc({ action }, count);
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
