import { Body, Controller, Headers, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse } from '../openapi/responses';
import { RewindDto } from './rewind.dto';
import { RewindService } from './rewind.service';

@ApiTags('sessions')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/rewind')
export class RewindController {
  constructor(private readonly rewinds: RewindService) {}

  @Post()
  @ApiOperation({
    summary:
      'Rewind the view to toSeq (event session.rewound): what clients appended after it leaves the context; the log keeps it, and a context at an earlier atSeq or a fork taken there still shows it. 409 rewind_behind_pivot inside the compacted range',
  })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'Rewound', {
    description: 'Rewound (or the replay of a request with the same Idempotency-Key)',
    location: 'The session.rewound event in the log (`events?afterSeq=`)',
  })
  @ProblemResponses(404, 409, 415, 422)
  async rewind(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: RewindDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.rewinds.rewind(tenantId, sessionId, dto.toSeq, parseIdempotencyKey(key));
    res.status(result.status);
    res.setHeader('location', `/v1/sessions/${encodeURIComponent(sessionId)}/events?afterSeq=${result.body.seq - 1}`);
    return result.body;
  }
}
