import { Body, Controller, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { PruneRequestDto } from './prune.dto';
import { PruneService } from './prune.service';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { JsonResponse } from '../openapi/responses';

@ApiTags('prune')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
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
  @JsonResponse(200, 'PruneReport', { description: 'With `wait`: what the job did' })
  @JsonResponse(202, 'PruneQueued', {
    description: 'Queued',
    location: 'Where its outcome will be logged: the tool_outputs.pruned and tool_results.archived events after the current head',
  })
  @ProblemResponses(404, 413, 415)
  async prune(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: PruneRequestDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.service.prune(tenantId, sessionId, dto);
    res.status(result.status);
    if (result.status === 202) {
      const types = 'tool_outputs.pruned,tool_results.archived';
      res.setHeader('location', `/v1/sessions/${encodeURIComponent(sessionId)}/events?afterSeq=${result.body.headSeq}&types=${types}`);
    }
    return result.body;
  }
}
