import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { ContextQuery } from './context.dto';
import { CONTEXT_EXAMPLES } from './context.examples';
import { ContextService } from './context.service';

@ApiTags('context')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/context')
export class ContextController {
  constructor(private readonly contexts: ContextService) {}

  @Get()
  @ApiOperation({
    summary: 'The model-ready context: system prompt, the latest pivot prefix and the window, pair-normalized, in the requested format',
  })
  @ApiOkResponse({ description: 'The rendered context and its token figures', content: { 'application/json': { examples: CONTEXT_EXAMPLES } } })
  context(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ContextQuery) {
    return this.contexts.context(tenantId, sessionId, query);
  }
}
