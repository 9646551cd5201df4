import { Body, Controller, Headers, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse, schemaRef } from '../openapi/responses';
import { answerAppend } from './events.controller';
import { EventsService } from './events.service';

const NATIVE_EXAMPLES = {
  responses: {
    summary: "A Responses API step: the tool outputs sent with the call, then the SDK's Response whole",
    value: {
      format: 'openai-responses',
      messages: [{ type: 'function_call_output', call_id: 'call_1', output: '1 failing' }],
      response: {
        status: 'completed',
        output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'One test fails.', annotations: [] }] }],
        usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1208 },
      },
    },
  },
  anthropic: {
    summary: 'A user turn in the Messages API shape',
    value: { format: 'anthropic', messages: [{ role: 'user', content: 'Fix the failing test in src/app.ts' }] },
  },
};

@ApiTags('events')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/messages')
export class MessagesController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @ApiOperation({
    summary:
      "Append in a provider SDK's own shapes: the messages sent to the model and the response object it returned, as message.added and step.finished events (a retry with the same Idempotency-Key gets the first answer)",
  })
  @ApiBody({ schema: schemaRef('NativeAppendRequest'), examples: NATIVE_EXAMPLES })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'AppendResult', {
    description: 'Appended (or the replay of a request with the same Idempotency-Key)',
    location: 'The appended events in the log (`events?afterSeq=`)',
  })
  @ProblemResponses(404, 409, 413, 415, 422)
  async append(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    // Raw body: the domain reads each format's shapes, with paths in its errors.
    @Body() body: unknown,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answerAppend(res, sessionId, await this.events.appendNative(tenantId, sessionId, body, parseIdempotencyKey(key)));
  }
}
