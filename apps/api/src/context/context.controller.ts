import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { ContextQuery } from './context.dto';
import { CONTEXT_EXAMPLES } from './context.examples';
import { ContextService } from './context.service';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { JsonResponse } from '../openapi/responses';

@ApiTags('context')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/context')
export class ContextController {
  constructor(private readonly contexts: ContextService) {}

  @Get()
  @ApiOperation({
    summary: 'The model-ready context: system prompt, the latest pivot prefix and the window, pair-normalized, in the requested format',
  })
  @JsonResponse(200, 'Context', { description: 'The rendered context and its token figures', examples: CONTEXT_EXAMPLES })
  @ProblemResponses(404, 422)
  context(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ContextQuery) {
    return this.contexts.context(tenantId, sessionId, query);
  }
}
