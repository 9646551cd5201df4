import { Body, Controller, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse, schemaRef } from '../openapi/responses';
import { ListCompactionsQuery, RequestCompactionDto } from './compactions.dto';
import { CompactionsService } from './compactions.service';

/** A queued compaction's entry in the history (a page of one): its Location header. */
function historyLocation(sessionId: string, body: unknown): string {
  const { markerSeq } = body as { markerSeq: number };
  return `/v1/sessions/${encodeURIComponent(sessionId)}/compactions?afterSeq=${markerSeq - 1}&limit=1`;
}

@ApiTags('compactions')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/compactions')
export class CompactionsController {
  constructor(private readonly compactions: CompactionsService) {}

  @Post()
  @ApiOperation({
    summary: 'Compact now: opens a marker (or joins the pending one); 202 queued, 200 when `wait` saw it committed; `dryRun` writes nothing',
  })
  @ApiHeader(IDEMPOTENCY_KEY)
  @ApiResponse({
    status: 200,
    description: 'With `wait`: the compaction finished (completed, failed or skipped); with `dryRun`: what it would produce',
    content: { 'application/json': { schema: { oneOf: [schemaRef('CompactionRequestResult'), schemaRef('CompactionDryRun')] } } },
  })
  @JsonResponse(202, 'CompactionRequestResult', {
    description: 'Queued (or joined the pending compaction), or still running when `wait` timed out',
    location: "The compaction's entry in the history: poll it, or watch the event stream for compaction.completed",
  })
  @ProblemResponses(404, 409, 413, 415, 422)
  async request(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: RequestCompactionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.compactions.request(tenantId, sessionId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    if (result.status === 202) res.setHeader('location', historyLocation(sessionId, result.body));
    return result.body;
  }

  @Get()
  @ApiOperation({
    summary: 'Compaction history: ranges, summaries, retention, tokens before and after, strategy, model, duration, failures; `include=record` adds the summary record',
  })
  @JsonResponse(200, 'CompactionHistory', { description: 'A page of compactions, oldest first, and the current state' })
  @ProblemResponses(404)
  list(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ListCompactionsQuery) {
    return this.compactions.list(tenantId, sessionId, query.afterSeq, query.limit, { record: query.include === 'record' });
  }
}
