import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { CreateSessionDto, ForkSessionDto, ListSessionsQuery, UpdateSessionDto } from './sessions.dto';
import { SessionsService } from './sessions.service';

@ApiTags('sessions')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a session (the client may choose its id)' })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async create(
    @TenantId() tenantId: string,
    @Body() dto: CreateSessionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.sessions.create(tenantId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    return result.body;
  }

  @Get()
  @ApiOperation({ summary: 'List and search sessions (metadata containment, title, created and activity ranges), by last activity, newest first, with a cursor' })
  list(@TenantId() tenantId: string, @Query() query: ListSessionsQuery) {
    return this.sessions.list(tenantId, query);
  }

  @Get(':sessionId')
  @ApiOperation({ summary: 'Session state: head, model, configuration' })
  get(@TenantId() tenantId: string, @Param('sessionId') sessionId: string) {
    return this.sessions.get(tenantId, sessionId);
  }

  @Patch(':sessionId')
  @ApiOperation({ summary: 'Change the session configuration (a deep-merged patch, logged as session.config_changed), archive or unarchive it' })
  update(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Body() dto: UpdateSessionDto) {
    return this.sessions.update(tenantId, sessionId, dto);
  }

  @Post(':sessionId/forks')
  @ApiOperation({ summary: "Fork a session at a seq (copy-on-write): a new session that starts from the source's view there, then diverges" })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async fork(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: ForkSessionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.sessions.fork(tenantId, sessionId, dto, parseIdempotencyKey(key));
    res.status(result.status);
    res.setHeader('location', `/v1/sessions/${encodeURIComponent((result.body as { id: string }).id)}`);
    return result.body;
  }

  @Delete(':sessionId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Hard-delete a session and everything it holds' })
  async delete(@TenantId() tenantId: string, @Param('sessionId') sessionId: string): Promise<void> {
    await this.sessions.delete(tenantId, sessionId);
  }
}
