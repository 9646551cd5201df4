import { Controller, Get, Headers, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { Response } from 'express';
import { invalid } from '@app/domain';
import { ApiKeyGuard, ApiKeyId, TenantId } from '../auth/guards';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { BodyResponse } from '../openapi/responses';
import { EventStreamsService } from './events-stream.service';

export class StreamEventsQuery {
  @ApiPropertyOptional({ description: 'Start after this seq (a Last-Event-ID header takes precedence)', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  afterSeq?: number;
}

/** Last-Event-ID is the seq of the last event the client saw: a non-negative integer. */
function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const seq = /^\d{1,16}$/.test(header.trim()) ? Number(header.trim()) : NaN;
  if (!Number.isSafeInteger(seq)) throw invalid('invalid_last_event_id', 'Last-Event-ID must be the seq of an event (a non-negative integer)');
  return seq;
}

@ApiTags('events')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/events/stream')
export class EventsStreamController {
  constructor(private readonly streams: EventStreamsService) {}

  @Get()
  @ApiOperation({
    summary: 'Live event stream (Server-Sent Events): every event after Last-Event-ID (or afterSeq), then each one as it is appended',
    description:
      'Each event is one message: `id:` its seq, `event:` its type, `data:` the event as GET .../events returns it. Reconnect with ' +
      'Last-Event-ID to resume with no event missed or repeated. A comment line every SSE_HEARTBEAT_MS keeps idle connections open. ' +
      'Beyond SSE_MAX_STREAMS_PER_TENANT open streams per API process: 429 too_many_streams with Retry-After; an archived session ' +
      'has no stream (409 session_archived). When access ends (the key revoked, the tenant suspended or deleted, the session deleted ' +
      'or archived) the stream sends a final `event: end` with `data: {"reason": "key_revoked" | "tenant_suspended" | ' +
      '"tenant_deleted" | "session_deleted" | "session_archived"}` (no `id:`) and closes: do not reconnect. When the API process ' +
      'stops it closes with no such event: reconnect with Last-Event-ID.',
  })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'The seq of the last event received' })
  @BodyResponse(200, 'text/event-stream', 'An endless event stream: each `data:` line is one Event (the Event schema) as JSON, but the final `event: end` message\'s, which is `{"reason": …}`')
  @ProblemResponses(404, 409)
  async stream(
    @TenantId() tenantId: string,
    @ApiKeyId() keyId: string,
    @Param('sessionId') sessionId: string,
    @Query() query: StreamEventsQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    await this.streams.stream(tenantId, keyId, sessionId, parseLastEventId(lastEventId) ?? query.afterSeq ?? 0, res);
  }
}
