import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { JsonResponse } from '../openapi/responses';
import { SearchQuery, SessionSearchQuery } from './search.dto';
import { SearchService } from './search.service';

@ApiTags('search')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Get('search')
  @ApiOperation({ summary: "Full-text search over the tenant's sessions: hits ranked by relevance, then newest first, with a cursor" })
  @JsonResponse(200, 'SearchResult', { description: 'A page of hits' })
  searchAll(@TenantId() tenantId: string, @Query() query: SearchQuery) {
    return this.search.search(tenantId, query);
  }

  @Get('sessions/:sessionId/search')
  @ApiOperation({ summary: "Full-text search inside one session's log (the same hits), with how far its index reaches" })
  @JsonResponse(200, 'SessionSearchResult', { description: 'A page of hits of the session' })
  @ProblemResponses(404)
  searchSession(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: SessionSearchQuery) {
    return this.search.search(tenantId, query, sessionId);
  }
}
