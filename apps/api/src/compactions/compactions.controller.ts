import { Body, Controller, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { ListCompactionsQuery, RequestCompactionDto } from './compactions.dto';
import { CompactionsService } from './compactions.service';

@ApiTags('compactions')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/compactions')
export class CompactionsController {
  constructor(private readonly compactions: CompactionsService) {}

  @Post()
  @ApiOperation({
    summary: 'Compact now: opens a marker (or joins the pending one); 202 queued, 200 when `wait` saw it committed; `dryRun` writes nothing',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async request(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: RequestCompactionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.compactions.request(tenantId, sessionId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    return result.body;
  }

  @Get()
  @ApiOperation({
    summary: 'Compaction history: ranges, summaries, retention, tokens before and after, strategy, model, duration, failures; `include=record` adds the summary record',
  })
  list(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ListCompactionsQuery) {
    return this.compactions.list(tenantId, sessionId, query.afterSeq, query.limit, { record: query.include === 'record' });
  }
}
