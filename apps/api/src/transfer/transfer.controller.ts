import { Controller, Get, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '@app/config';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { consumeStreamedBody } from '../http/request-body';
import { ImportSessionQuery } from './transfer.dto';
import { TransferService } from './transfer.service';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { BodyResponse, JsonResponse } from '../openapi/responses';

/** JSON Lines media types; the JSON body parser reads none of them, so the body stays a stream. */
const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl'];

@ApiTags('sessions')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class TransferController {
  constructor(
    private readonly transfer: TransferService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(':sessionId/export')
  @ApiOperation({ summary: 'Export the session as JSON Lines: a header, then every event in seq order, each preceded by the tool outputs it cites (streamed, base64 chunks)' })
  @BodyResponse(200, 'application/x-ndjson', 'JSON Lines: a header line, then the events and the tool outputs they cite')
  @ProblemResponses(404)
  async export(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Res() res: Response): Promise<void> {
    await this.transfer.export(tenantId, sessionId, res);
  }

  @Post('import')
  @ApiOperation({
    summary: 'Import an export into a new session (id from ?id=, else the exported id): 201 with the session, or 400 naming the bad line and nothing stored',
    description:
      'Streamed: parsed line by line, tool outputs staged as uploads; a body that sends nothing for UPLOAD_IDLE_TIMEOUT_MS is ended with 408. Ref ids the tenant already uses are renamed (renamedRefs).',
  })
  @ApiConsumes(...JSONL_TYPES)
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @JsonResponse(201, 'ImportResult', { description: 'Imported', location: 'The new session' })
  @ProblemResponses(408, 409, 413, 415)
  async import(@TenantId() tenantId: string, @Query() query: ImportSessionQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const accept = { types: JSONL_TYPES, hint: 'Send the export', idleTimeoutMs: this.config.toolOutput.uploadIdleTimeoutMs };
    const result = await consumeStreamedBody(req, res, accept, (body) => this.transfer.import(tenantId, body, query.id));
    res.status(201);
    res.setHeader('location', `/v1/sessions/${encodeURIComponent(result.session.id)}`);
    return result;
  }
}
