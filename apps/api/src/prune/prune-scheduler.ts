import { Inject, Injectable, Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '@app/config';
import { maintenanceWanted, NewEvent, resolveSessionConfig } from '@app/domain';
import { SessionConfigs } from '@app/event-store';
import { JobDispatcher, JobName, QueueName, SessionJobData, sessionJobId } from '@app/queue';

/**
 * Puts a session's prune/archive job on the maintenance queue: after each
 * step.finished (delayed, one waiting per session) and on demand.
 */
@Injectable()
export class PruneScheduler {
  private readonly logger = new Logger(PruneScheduler.name);

  constructor(
    private readonly dispatcher: JobDispatcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The queue, or null while Redis is not connected: the append must not wait on Redis. */
  private queue(): Queue | null {
    return this.dispatcher.connected ? this.dispatcher.queue(QueueName.Maintenance) : null;
  }

  /**
   * In the append's transaction: whether the batch finishes a step of a
   * session whose prune or archive can act (`configs` is read only then). Every step, not only a turn's
   * last: Anthropic's clearing and seed 001's archiving act between the steps
   * of a turn, and OpenCode's protected turns keep a mid-turn run off the
   * working set.
   */
  async wantedAfter(events: readonly NewEvent[], configs: () => Promise<SessionConfigs>): Promise<boolean> {
    if (!events.some((event) => event.type === 'step.finished')) return false;
    const { config, tenantConfig } = await configs();
    return maintenanceWanted(resolveSessionConfig(null, tenantConfig, config));
  }

  /**
   * After the append committed: a job `jobDelayMs` from now unless one is
   * already waiting for the session (deduplication by session: the waiting
   * job reads the log when it runs, so it covers this step too); while one
   * runs, exactly one follow-up is kept (keepLastIfActive). Not a debounce
   * that restarts the delay on every step: an agent stepping faster than the
   * delay would never be pruned. Best effort, never failing the append: with
   * Redis unreachable the step is not scheduled, the next one schedules
   * again, and `POST .../prune` runs the job on demand.
   */
  async afterStep(tenantId: string, sessionId: string, headSeq: number): Promise<void> {
    const data: SessionJobData = { tenantId, sessionId };
    const queue = this.queue();
    if (!queue) return;
    try {
      await queue.add(JobName.Prune, data, {
        jobId: sessionJobId(JobName.Prune, tenantId, sessionId, headSeq),
        delay: this.config.prune.jobDelayMs,
        deduplication: { id: sessionJobId(JobName.Prune, tenantId, sessionId, 'session'), keepLastIfActive: true },
      });
    } catch (error) {
      this.logger.debug(`prune job of session ${sessionId} not scheduled: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A job to run now, beside any delayed one (which then finds nothing new). Throws when Redis is unreachable. */
  async now(tenantId: string, sessionId: string, headSeq: number): Promise<string> {
    const data: SessionJobData = { tenantId, sessionId };
    const jobId = sessionJobId(JobName.Prune, tenantId, sessionId, `now-${headSeq}`);
    const queue = this.queue();
    if (!queue) throw new Error('Redis is not connected');
    const job = await queue.add(JobName.Prune, data, { jobId });
    return job.id ?? jobId;
  }
}
