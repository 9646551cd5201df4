import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { Database, DatabaseModule } from '@app/database';
import { ChannelSubscriber, OutboxRelay, PRODUCER_REDIS, publishSessionHead, QueueProducerModule, RedisClient } from '@app/queue';
import { SummarizerModule } from '@app/summarizer';
import { CompactSession } from './compaction/compact-session';
import { CompactionProcessor } from './compaction/compaction.processor';
import { MaintenanceProcessor } from './maintenance.processor';
import { Reconciler } from './reconciler';
import { AppendCommitted, PruneSession, RewriteMetrics } from '@app/use-cases';
import { JobSchedules } from './job-schedules';
import { SearchIndexing } from './search-indexing';
import { CLOCK, SessionRetention } from './session-retention';
import { GC_DB, ToolOutputGc } from './tool-output-gc';
import { SWEEPER_DB } from './worker-db';
import { WorkerHttp } from './worker-http';
import { WorkerMetrics } from './worker-metrics';
import { WorkerRuntime } from './worker-runtime';

/** BullMQ processors and the outbox sweeper. No controllers. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, QueueProducerModule, SummarizerModule],
      providers: [
        { provide: SWEEPER_DB, useFactory: () => new Database(config.database.sweeperUrl, 2, 'session-store-sweeper', config.database.citus !== null) },
        { provide: GC_DB, useFactory: () => new Database(config.database.gcUrl, 2, 'session-store-gc', config.database.citus !== null) },
        ToolOutputGc,
        { provide: CLOCK, useValue: () => new Date() },
        SessionRetention,
        ChannelSubscriber,
        SearchIndexing,
        JobSchedules,
        MaintenanceProcessor,
        PruneSession,
        CompactSession,
        CompactionProcessor,
        WorkerMetrics,
        { provide: RewriteMetrics, useFactory: (metrics: WorkerMetrics) => new RewriteMetrics(metrics.registry), inject: [WorkerMetrics] },
        {
          provide: AppendCommitted,
          // The API's live streams hear the head over Redis; the worker serves none of its own.
          useFactory: (db: Database, relay: OutboxRelay, metrics: WorkerMetrics, redis: RedisClient) =>
            new AppendCommitted(db, relay, config.prune.jobDelayMs, metrics.registry, (head) => publishSessionHead(redis, config.redis.namespace, head)),
          inject: [Database, OutboxRelay, WorkerMetrics, PRODUCER_REDIS],
        },
        Reconciler,
        WorkerRuntime,
        WorkerHttp,
      ],
    };
  }
}
