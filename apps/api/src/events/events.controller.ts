import { Body, Controller, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { sendJsonPieces } from '../http/json-pieces';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse, schemaRef } from '../openapi/responses';
import { ReadEventsQuery } from './events.dto';
import { EventsService, pageJson } from './events.service';

const APPEND_EXAMPLES = {
  userTurn: {
    summary: 'A user message, only if nobody appended since seq 1',
    value: { expectedSeq: 1, events: [{ id: 'evt-0001', type: 'message.added', data: { message: { role: 'user', parts: [{ type: 'text', text: 'Fix the failing test in src/app.ts' }] } } }] },
  },
  step: {
    summary: "A model step: the assistant's tool call, its result, and the step's usage",
    value: {
      events: [
        { id: 'evt-0002', type: 'message.added', data: { message: { role: 'assistant', parts: [{ type: 'tool_call', callId: 'call-1', name: 'bash', input: { command: 'npm test' } }] } } },
        { id: 'evt-0003', type: 'message.added', data: { message: { role: 'tool', parts: [{ type: 'tool_result', callId: 'call-1', name: 'bash', output: '1 failing' }] } } },
        { id: 'evt-0004', type: 'step.finished', data: { usage: { input_tokens: 1200, output_tokens: 80 }, contextSeq: 1 } },
      ],
    },
  },
};

/** An append's answer: its status, and on a 201 the appended events' place in the log as its Location header. */
export function answerAppend(res: Response, sessionId: string, result: { status: number; body: unknown }): unknown {
  res.status(result.status);
  if (result.status === 201) {
    const [first] = (result.body as { events: Array<{ seq: number }> }).events;
    res.setHeader('location', `/v1/sessions/${encodeURIComponent(sessionId)}/events?afterSeq=${first.seq - 1}`);
  }
  return result.body;
}

@ApiTags('events')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @ApiOperation({ summary: 'Append a batch of events (201 new, 200 replay of known event ids)' })
  @ApiBody({ schema: schemaRef('AppendRequest'), examples: APPEND_EXAMPLES })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'AppendResult', { description: 'Appended', location: 'The appended events in the log (`events?afterSeq=`)' })
  @JsonResponse(200, 'AppendResult', { description: 'A replay: every event id of the batch was stored already, with the same body' })
  @ProblemResponses(404, 409, 413, 415, 422)
  async append(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    // Raw body: the domain validates events strictly, with paths in its errors.
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answerAppend(res, sessionId, await this.events.append(tenantId, sessionId, body, parseIdempotencyKey(key)));
  }

  @Get()
  @ApiOperation({ summary: 'Read the raw log, paged by seq' })
  @JsonResponse(200, 'EventPage', { description: 'A page of events in seq order' })
  @ProblemResponses(404)
  async read(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Query() query: ReadEventsQuery, @Res() res: Response) {
    const page = await this.events.read(tenantId, sessionId, { afterSeq: query.afterSeq, limit: query.limit, minSeq: query.minSeq, types: query.types });
    // Already JSON: the events' data as stored, not parsed and serialized again.
    sendJsonPieces(res, pageJson(page));
  }
}
