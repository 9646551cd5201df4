import { Controller, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DEFAULT_GREP_LIMIT, numberedLinesWithin, READ_DEFAULT_LIMIT } from '@app/domain/tool-output';
import { refView } from '@app/tool-output-store';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { GrepToolOutputQuery, ReadToolOutputQuery } from './tool-outputs.dto';
import { HTTP_READ_MAX_BYTES, ToolOutputReads } from './tool-output-reads.service';
import { TENANT_KEY_SCHEME } from '../openapi/document';
import { ProblemResponses, TENANT_PROBLEMS } from '../openapi/problem';
import { BodyResponse, JsonResponse } from '../openapi/responses';

/** Reads of stored tool outputs by ref id (any ref of the tenant; another tenant's is a 404). */
@ApiTags('tool-outputs')
@ApiBearerAuth(TENANT_KEY_SCHEME)
@ProblemResponses(...TENANT_PROBLEMS)
@UseGuards(ApiKeyGuard)
@Controller('v1/tool-outputs')
export class ToolOutputsController {
  constructor(private readonly outputs: ToolOutputReads) {}

  @Get(':refId')
  @ApiOperation({ summary: 'Numbered lines from offset (1-based), like a file read; nextOffset is null at the end' })
  @JsonResponse(200, 'ToolOutputLines', { description: 'A page of numbered lines' })
  @ProblemResponses(404)
  async read(@TenantId() tenantId: string, @Param('refId') refId: string, @Query() query: ReadToolOutputQuery) {
    const offset = query.offset ?? 1;
    const page = await this.outputs.readLines(tenantId, refId, offset, query.limit ?? READ_DEFAULT_LIMIT, HTTP_READ_MAX_BYTES);
    // The lines are already cut at the maximum line length; this only numbers them within the byte budget.
    const shown = numberedLinesWithin(page.lines, offset, Infinity, HTTP_READ_MAX_BYTES);
    const next = offset + shown.length;
    return {
      ref: refView(page.ref),
      offset,
      lines: shown.join('\n'),
      lineCount: shown.length,
      totalLines: page.totalLines,
      nextOffset: shown.length > 0 && next <= page.totalLines ? next : null,
    };
  }

  @Get(':refId/grep')
  @ApiOperation({ summary: 'Line-by-line RE2 search with caps on pattern length, matches, bytes scanned and time; partial says which cap stopped it' })
  @JsonResponse(200, 'ToolOutputGrep', { description: 'The matches with their context lines' })
  @ProblemResponses(404)
  async grep(@TenantId() tenantId: string, @Param('refId') refId: string, @Query() query: GrepToolOutputQuery) {
    const { ref, result } = await this.outputs.grep(tenantId, refId, {
      pattern: query.pattern,
      ignoreCase: query.ignoreCase ?? false,
      context: query.context ?? 0,
      limit: query.limit ?? DEFAULT_GREP_LIMIT,
    });
    return { ref: refView(ref), pattern: query.pattern, ignoreCase: query.ignoreCase ?? false, ...result };
  }

  @Get(':refId/raw')
  @ApiOperation({ summary: 'The original bytes, streamed' })
  @BodyResponse(200, 'application/octet-stream', 'The bytes as uploaded')
  @ProblemResponses(404)
  raw(@TenantId() tenantId: string, @Param('refId') refId: string, @Res() res: Response): Promise<void> {
    return this.outputs.streamRaw(tenantId, refId, res);
  }
}
