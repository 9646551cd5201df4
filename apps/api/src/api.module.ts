import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { QueueProducerModule } from '@app/queue';
import { AdminController } from './admin/admin.controller';
import { AdminService } from './admin/admin.service';
import { ApiKeysService } from './auth/api-keys.service';
import { AdminGuard, ApiKeyGuard } from './auth/guards';
import { ContextController } from './context/context.controller';
import { ContextService } from './context/context.service';
import { EventsController } from './events/events.controller';
import { EventsService } from './events/events.service';
import { HealthController } from './health/health.controller';
import { SessionsController } from './sessions/sessions.controller';
import { SessionsService } from './sessions/sessions.service';

@Module({})
export class ApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule, QueueProducerModule],
      controllers: [HealthController, AdminController, SessionsController, EventsController, ContextController],
      providers: [ApiKeysService, ApiKeyGuard, AdminGuard, AdminService, SessionsService, EventsService, ContextService],
    };
  }
}
