import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { Database, DatabaseModule } from '@app/database';
import { ChannelSubscriber, OutboxRelay, QueueProducerModule } from '@app/queue';
import { SummarizerModule } from '@app/summarizer';
import { GrepPool } from '@app/tool-output-store';
// The worker's use case: `POST .../prune {wait}` runs the same code in the API process.
import { AppendCommitted, PruneSession, RewriteMetrics } from '@app/use-cases';
import { AdminController } from './admin/admin.controller';
import { AdminService } from './admin/admin.service';
import { ApiKeysService } from './auth/api-keys.service';
import { CacheInvalidation } from './auth/cache-invalidation';
import { AdminGuard, ApiKeyGuard, MetricsGuard } from './auth/guards';
import { AuthFailureLimiter } from './auth/auth-failure-limiter';
import { TenantLimitsService } from './limits/tenant-limits';
import { CompactionWaiter } from './compactions/compaction-waiter';
import { ViewBounds } from './compactions/view-bounds';
import { CompactionsController } from './compactions/compactions.controller';
import { CompactionsService } from './compactions/compactions.service';
import { ContextController } from './context/context.controller';
import { ContextService } from './context/context.service';
import { EventsController } from './events/events.controller';
import { MessagesController } from './events/messages.controller';
import { EventsService } from './events/events.service';
import { EventsStreamController } from './events/events-stream.controller';
import { SessionHeads } from './events/events-stream.heads';
import { EventStreamsService } from './events/events-stream.service';
import { StreamAccess } from './events/stream-access';
import { JsonBodyReader, ReadJsonBody } from './http/body-parsing';
import { Draining } from './http/draining';
import { HealthController } from './health/health.controller';
import { InspectorModule } from './inspector/inspector.module';
import { Metrics } from './metrics/metrics';
import { MetricsController } from './metrics/metrics.controller';
import { PinsController } from './pins/pins.controller';
import { PinsService } from './pins/pins.service';
import { RewindController } from './rewind/rewind.controller';
import { RewindService } from './rewind/rewind.service';
import { PruneController } from './prune/prune.controller';
import { PruneScheduler } from './prune/prune-scheduler';
import { PruneService } from './prune/prune.service';
import { SearchController } from './search/search.controller';
import { SearchService } from './search/search.service';
import { SessionsController } from './sessions/sessions.controller';
import { SessionsService } from './sessions/sessions.service';
import { SessionToolOutputsController } from './tool-outputs/session-tool-outputs.controller';
import { ToolOutputsController } from './tool-outputs/tool-outputs.controller';
import { ToolOutputAppend } from './tool-outputs/tool-output-append';
import { ToolOutputReads } from './tool-outputs/tool-output-reads.service';
import { ToolOutputUploads } from './tool-outputs/tool-output-uploads.service';
import { TransferController } from './transfer/transfer.controller';
import { TransferService } from './transfer/transfer.service';

@Module({})
export class ApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, QueueProducerModule, SummarizerModule, InspectorModule],
      controllers: [HealthController, MetricsController, AdminController, SessionsController, EventsController, MessagesController, EventsStreamController, ContextController, CompactionsController, ToolOutputsController, SessionToolOutputsController, PruneController, PinsController, RewindController, TransferController, SearchController],
      providers: [
        CacheInvalidation, AuthFailureLimiter, ApiKeysService, TenantLimitsService, ApiKeyGuard, AdminGuard, MetricsGuard, AdminService, SessionsService, EventsService, ContextService, CompactionsService, CompactionWaiter, ViewBounds,
        JsonBodyReader, ReadJsonBody, Draining,
        ToolOutputAppend,
        ToolOutputReads,
        ToolOutputUploads,
        PruneSession, PruneScheduler, PruneService,
        PinsService,
        RewindService,
        TransferService,
        SearchService,
        ChannelSubscriber, SessionHeads, StreamAccess, EventStreamsService,
        Metrics,
        { provide: RewriteMetrics, useFactory: (metrics: Metrics) => new RewriteMetrics(metrics.registry), inject: [Metrics] },
        {
          provide: AppendCommitted,
          // A head committed here wakes this process's streams at once (SessionHeads), the others' over Redis.
          useFactory: (db: Database, relay: OutboxRelay, metrics: Metrics, heads: SessionHeads) =>
            new AppendCommitted(db, relay, config.prune.jobDelayMs, metrics.registry, (head) => heads.publish(head)),
          inject: [Database, OutboxRelay, Metrics, SessionHeads],
        },
        { provide: GrepPool, useFactory: () => new GrepPool(config.toolOutput.grepThreads) },
      ],
    };
  }
}
