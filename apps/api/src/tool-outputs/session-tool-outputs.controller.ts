import { Body, Controller, HttpCode, Inject, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '@app/config';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { consumeStreamedBody } from '../http/request-body';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { JsonResponse } from '../openapi/responses';
import { ToolCallDto } from './tool-outputs.dto';
import { ToolOutputReads } from './tool-output-reads.service';
import { ToolOutputUploads } from './tool-output-uploads.service';

const UPLOAD_TYPES = ['text/plain', 'application/octet-stream'];

/** A session's side of the cache: streamed uploads, and the tool calls its model makes. */
@ApiTags('tool-outputs')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId')
export class SessionToolOutputsController {
  constructor(
    private readonly uploads: ToolOutputUploads,
    private readonly reads: ToolOutputReads,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('tool-outputs')
  @ApiOperation({
    summary: 'Upload a tool output as a stream (text/plain or application/octet-stream, stored byte-exact); returns its ref and in-context view',
    description:
      'A body that sends nothing for UPLOAD_IDLE_TIMEOUT_MS is ended with 408 upload_idle_timeout; beyond UPLOADS_PER_TENANT uploads in progress, 429 too_many_uploads with Retry-After. Either way nothing is stored.',
  })
  @ApiConsumes(...UPLOAD_TYPES)
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @JsonResponse(201, 'ToolOutputUpload', { description: 'Stored', location: 'The stored output (read it by lines, grep it, or fetch its bytes)' })
  @ProblemResponses(404, 408, 409, 413, 415)
  async upload(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    const accept = { types: UPLOAD_TYPES, hint: 'Upload the output', idleTimeoutMs: this.config.toolOutput.uploadIdleTimeoutMs };
    const result = await consumeStreamedBody(req, res, accept, (body) => this.uploads.upload(tenantId, sessionId, body, declared));
    res.status(201);
    res.setHeader('location', `/v1/tool-outputs/${encodeURIComponent(result.ref.id)}`);
    return result;
  }

  @Post('tool-calls')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Execute a tool_output_cache or tool_output_cache_grep call as the model produced it; returns the text to hand back to the model',
  })
  @JsonResponse(200, 'ToolCallResult', { description: 'The tool result (isError for a bad call the model should see, such as an unknown ref)' })
  @ProblemResponses(404, 413, 415)
  call(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Body() body: ToolCallDto) {
    return this.reads.callTool(tenantId, sessionId, body.name, body.arguments);
  }
}
