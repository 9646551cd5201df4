import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from './database';
import { ReadDatabase } from './read-database';

/** The runtime pool: role session_store_app, subject to RLS; and where context and event reads go (ReadDatabase). */
@Global()
@Module({
  providers: [
    {
      provide: Database,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new Database(config.database.appUrl, config.database.poolSize, 'session-store', config.database.citus !== null),
    },
    {
      provide: ReadDatabase,
      inject: [APP_CONFIG, Database],
      useFactory: (config: AppConfig, primary: Database) =>
        new ReadDatabase(primary, config.database.readUrl ? new Database(config.database.readUrl, config.database.poolSize, 'session-store-reads', config.database.citus !== null) : null),
    },
  ],
  exports: [Database, ReadDatabase],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ReadDatabase) private readonly reads: ReadDatabase,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.db.close(), this.reads.close()]);
  }
}
