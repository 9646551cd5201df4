import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse } from '../openapi/responses';
import { CreateSessionDto, ForkSessionDto, ListSessionsQuery, UpdateSessionDto } from './sessions.dto';
import { SessionsService } from './sessions.service';

/** Where a created session (or fork) lives: its Location header. */
const sessionLocation = (body: unknown) => `/v1/sessions/${encodeURIComponent((body as { id: string }).id)}`;

@ApiTags('sessions')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a session (the client may choose its id)' })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'Session', { description: 'Created (or the replay of a request with the same Idempotency-Key)', location: 'The session' })
  @ProblemResponses(409, 413, 415, 422)
  async create(
    @TenantId() tenantId: string,
    @Body() dto: CreateSessionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.sessions.create(tenantId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    res.setHeader('location', sessionLocation(result.body));
    return result.body;
  }

  @Get()
  @ApiOperation({ summary: 'List and search sessions (metadata containment, title, created and activity ranges), by last activity, newest first, with a cursor' })
  @JsonResponse(200, 'SessionList', { description: 'A page of sessions' })
  list(@TenantId() tenantId: string, @Query() query: ListSessionsQuery) {
    return this.sessions.list(tenantId, query);
  }

  @Get(':sessionId')
  @ApiOperation({ summary: 'Session state: head, model, configuration' })
  @JsonResponse(200, 'SessionDetail', { description: 'The session with its token figures and compaction state' })
  @ProblemResponses(404)
  get(@TenantId() tenantId: string, @Param('sessionId') sessionId: string) {
    return this.sessions.get(tenantId, sessionId);
  }

  @Patch(':sessionId')
  @ApiOperation({ summary: 'Change the session configuration (a deep-merged patch, logged as session.config_changed), archive or unarchive it' })
  @JsonResponse(200, 'SessionDetail', { description: 'The session after the change' })
  @ProblemResponses(404, 409, 413, 415, 422)
  update(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Body() dto: UpdateSessionDto) {
    return this.sessions.update(tenantId, sessionId, dto);
  }

  @Post(':sessionId/forks')
  @ApiOperation({ summary: "Fork a session at a seq (copy-on-write): a new session that starts from the source's view there, then diverges" })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'Session', { description: 'The fork', location: 'The fork' })
  @ProblemResponses(404, 409, 413, 415, 422)
  async fork(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: ForkSessionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.sessions.fork(tenantId, sessionId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    res.setHeader('location', sessionLocation(result.body));
    return result.body;
  }

  @Delete(':sessionId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Hard-delete a session and everything it holds' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ProblemResponses(404)
  async delete(@TenantId() tenantId: string, @Param('sessionId') sessionId: string): Promise<void> {
    await this.sessions.delete(tenantId, sessionId);
  }
}
