import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { sessionsBehindSearch } from '@app/event-store';
import { indexSessionForSearch } from '@app/use-cases';
import { ChannelSubscriber, JobDispatcher, JobName, parseSessionHead, QuietWindows, searchNoticesChannel, SessionJobData, sessionJobId } from '@app/queue';
import { OutboxMessage } from '@app/event-store';
import { DutyCycle } from './duty-cycle';

/** The longest pause between index runs, whatever the last run took (DutyCycle). */
const MAX_PAUSE_MS = 10_000;
/** Sessions enqueued per sweep batch. */
const SWEEP_BATCH = 1000;

const indexMessage = (tenantId: string, sessionId: string, discriminator: string | number): OutboxMessage => {
  const payload: SessionJobData = { tenantId, sessionId };
  return {
    jobName: JobName.SearchIndex,
    jobId: sessionJobId(JobName.SearchIndex, tenantId, sessionId, discriminator),
    payload: { ...payload },
    deduplicationId: sessionJobId(JobName.SearchIndex, tenantId, sessionId, 'session'),
  };
};

/**
 * Search indexing runs off the append path: with the new head it publishes
 * for live streams, the API publishes a search notice, at most one per
 * session per SEARCH_INDEX_DELAY_MS (QuietWindows; nothing is
 * written or awaited per append); compaction and prune publish one with
 * every head. Each worker hears the notices and enqueues the session's
 * index job SEARCH_INDEX_DELAY_MS later, deduplicated per session (one
 * waiting, one more kept while one runs), so a burst of appends costs one
 * run. A notice for a session this process already enqueued a waiting run
 * for is not sent to Redis again, until a run of that session starts here
 * (it reads the newest head) or SEARCH_SWEEP_INTERVAL_MS passes (a run
 * another worker took: the notices that worker hears after its run starts,
 * it sends itself; the sweep covers the rest). What pub/sub loses, and
 * events written elsewhere (imports, forks, pins), the sweep finds by the
 * progress table.
 * Indexing an event costs about as much CPU as appending it (tokens in
 * this process, heap and GIN inserts in PostgreSQL), so runs have a queue
 * of their own, one at a time, paced to SEARCH_INDEX_DUTY_PERCENT of wall
 * time: under a flood of appends the index lags and catches up after,
 * instead of taking the cores the appends need.
 */
@Injectable()
export class SearchIndexing {
  private readonly logger = new Logger(SearchIndexing.name);
  /** Sessions whose run this process enqueued may still be waiting. */
  private readonly waiting: QuietWindows;
  private readonly pacing: DutyCycle;

  constructor(
    private readonly db: Database,
    private readonly dispatcher: JobDispatcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    subscriber: ChannelSubscriber,
  ) {
    this.pacing = new DutyCycle(config.search.indexDuty, MAX_PAUSE_MS);
    this.waiting = new QuietWindows(Math.max(config.search.indexDelayMs, config.search.sweepIntervalMs));
    subscriber.listen(
      searchNoticesChannel(config.redis.namespace),
      (text) => this.heard(text),
      // Heads published while the subscription was down are lost: the sweep catches up.
      () => void this.sweep().catch((error: Error) => this.logger.warn(`search sweep: ${error.message}`)),
    );
  }

  private heard(text: string): void {
    const head = parseSessionHead(text);
    if (!head || !this.waiting.due(head)) return;
    this.dispatcher
      .dispatch(indexMessage(head.tenantId, head.sessionId, head.headSeq), { delayMs: this.config.search.indexDelayMs })
      .catch(() => this.waiting.forget(head));
  }

  /** The index job (its own queue, one at a time): the session's events after its progress, paced to its share. */
  async index(data: SessionJobData, signal?: AbortSignal): Promise<{ sessionId: string; indexedSeq: number | null }> {
    const indexedSeq = await this.pacing.run(() => {
      // From here on a new head needs a new run: this one may have read the head already.
      this.waiting.forget(data);
      return indexSessionForSearch(this.db, data.tenantId, data.sessionId);
    }, signal);
    return { sessionId: data.sessionId, indexedSeq };
  }

  /** Enqueues the index job of every session whose log is ahead of its index; returns how many. */
  async sweep(): Promise<number> {
    const behind = await this.db.systemTx((tx) => sessionsBehindSearch(tx, SWEEP_BATCH));
    const sweep = `sweep-${Date.now()}`;
    await this.dispatcher.dispatchBulk(behind.map((s) => indexMessage(s.tenantId, s.sessionId, sweep)));
    return behind.length;
  }
}
