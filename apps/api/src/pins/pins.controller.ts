import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { parseIdempotencyKey } from '../http/idempotency';
import { AddPinDto } from './pins.dto';
import { PinsService } from './pins.service';

@ApiTags('pins')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId/pins')
export class PinsController {
  constructor(private readonly pins: PinsService) {}

  @Post()
  @ApiOperation({
    summary: "Pin text: shown verbatim right after the pivot's prefix in every context, never summarized (event pin.added); 413 pin_budget_exceeded over pins.maxTokens",
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
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
  list(@TenantId() tenantId: string, @Param('sessionId') sessionId: string) {
    return this.pins.list(tenantId, sessionId);
  }

  @Delete(':pinId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Unpin (event pin.removed); 404 pin_not_found when the pin is not in force' })
  async remove(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Param('pinId') pinId: string): Promise<void> {
    await this.pins.remove(tenantId, sessionId, pinId);
  }
}
