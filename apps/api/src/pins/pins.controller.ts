import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { IDEMPOTENCY_KEY, JsonResponse } from '../openapi/responses';
import { AddPinDto } from './pins.dto';
import { PinsService } from './pins.service';

@ApiTags('pins')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/pins')
export class PinsController {
  constructor(private readonly pins: PinsService) {}

  @Post()
  @ApiOperation({
    summary: "Pin text: shown verbatim right after the pivot's prefix in every context, never summarized (event pin.added); 413 pin_budget_exceeded over pins.maxTokens",
  })
  @ApiHeader(IDEMPOTENCY_KEY)
  @JsonResponse(201, 'PinAdded', { description: 'Pinned', location: 'The pin (DELETE it to unpin)' })
  @ProblemResponses(404, 409, 413, 415, 422)
  async add(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Body() dto: AddPinDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.pins.add(tenantId, sessionId, dto.text, parseIdempotencyKey(key));
    res.status(result.status);
    res.setHeader('location', `/v1/sessions/${encodeURIComponent(sessionId)}/pins/${encodeURIComponent(result.body.pinId)}`);
    return result.body;
  }

  @Get()
  @ApiOperation({ summary: 'The pins in force, oldest first, with their tokens and the budget' })
  @JsonResponse(200, 'PinList', { description: 'The pins in force' })
  @ProblemResponses(404, 422)
  list(@TenantId() tenantId: string, @Param('sessionId') sessionId: string) {
    return this.pins.list(tenantId, sessionId);
  }

  @Delete(':pinId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Unpin (event pin.removed); 404 pin_not_found when the pin is not in force' })
  @ApiNoContentResponse({ description: 'Unpinned' })
  @ProblemResponses(404, 409)
  async remove(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Param('pinId') pinId: string): Promise<void> {
    await this.pins.remove(tenantId, sessionId, pinId);
  }
}
