import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { Database, DatabaseModule } from '@app/database';
import { QueueProducerModule } from '@app/queue';
import { MaintenanceProcessor } from './maintenance.processor';
import { SWEEPER_DB, WorkerRuntime } from './worker-runtime';

/** BullMQ processors and the outbox sweeper. No controllers. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, QueueProducerModule],
      providers: [
        { provide: SWEEPER_DB, useFactory: () => new Database(config.database.sweeperUrl, 2, 'session-store-sweeper') },
        MaintenanceProcessor,
        WorkerRuntime,
      ],
    };
  }
}
