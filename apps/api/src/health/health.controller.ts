import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { JsonResponse, schemaRef } from '../openapi/responses';
import type { Response } from 'express';
import { Database } from '@app/database';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    private readonly db: Database,
    @Inject(PRODUCER_REDIS) private readonly redis: RedisClient,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process serves requests' })
  @JsonResponse(200, 'Health', { description: 'Serving' })
  health() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: PostgreSQL answers; Redis state is reported (appends work without it)' })
  @JsonResponse(200, 'Readiness', { description: 'Ready (status degraded: Redis is down)' })
  @ApiResponse({ status: 503, description: 'Not ready: PostgreSQL does not answer', content: { 'application/json': { schema: schemaRef('Readiness') } } })
  async ready(@Res({ passthrough: true }) res: Response) {
    const [postgres, redis] = await Promise.all([
      this.db.ping().then(() => 'ok', () => 'down'),
      this.redis.ping().then(() => 'ok', () => 'down'),
    ]);
    // Without Redis the API still accepts appends (the outbox keeps triggers), so only PostgreSQL gates readiness.
    res.status(postgres === 'ok' ? 200 : 503);
    return { status: postgres === 'ok' ? (redis === 'ok' ? 'ok' : 'degraded') : 'down', postgres, redis };
  }
}
