import { Body, Controller, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { PruneRequestDto } from './prune.dto';
import { PruneService } from './prune.service';

@ApiTags('prune')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/prune')
export class PruneController {
  constructor(private readonly service: PruneService) {}

  @Post()
  @ApiOperation({
    summary:
      'Prune and archive old tool results now: 200 with what was done (`wait: true`), else 202 with the queued job; ' +
      'idempotent (a second run marks nothing new); honours prune.enabled and archive.enabled',
  })
  async prune(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: PruneRequestDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.service.prune(tenantId, sessionId, dto);
    res.status(result.status);
    return result.body;
  }
}
