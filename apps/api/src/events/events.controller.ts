import { Body, Controller, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { AppendEventsDto, ReadEventsQuery } from './events.dto';
import { EventsService } from './events.service';

@ApiTags('events')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @ApiOperation({ summary: 'Append a batch of events (201 new, 200 replay of known event ids)' })
  @ApiBody({ type: AppendEventsDto })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async append(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    // Raw body: the domain validates events strictly, with paths in its errors.
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.events.append(tenantId, sessionId, body, parseIdempotencyKey(key));
    res.status(result.status);
    return result.body;
  }

  @Get()
  @ApiOperation({ summary: 'Read the raw log, paged by seq' })
  read(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ReadEventsQuery) {
    return this.events.read(tenantId, sessionId, { afterSeq: query.afterSeq, limit: query.limit, minSeq: query.minSeq, types: query.types });
  }
}
