import type { Readable } from 'node:stream';
import { Body, Controller, HttpCode, Param, Post, Req, Res, UnsupportedMediaTypeException, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiKeyGuard, TenantId } from '../auth/guards';
import { ToolCallDto } from './tool-outputs.dto';
import { ToolOutputsService } from './tool-outputs.service';

const UPLOAD_TYPES = ['text/plain', 'application/octet-stream'];

/**
 * The request body, piece by piece, with backpressure. Unlike `for await` on
 * the request itself, stopping early does not destroy the request (and with
 * it the socket), so the error response still reaches the client.
 */
async function* bodyPieces(req: Readable): AsyncGenerator<Buffer> {
  for (;;) {
    const piece: Buffer | null = req.read();
    if (piece !== null) {
      yield piece;
      continue;
    }
    if (req.readableEnded) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        req.off('readable', onReadable).off('end', onReadable).off('error', settle).off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onReadable = () => settle();
      const onClose = () => settle(req.readableEnded ? undefined : new Error('the client closed the upload'));
      req.on('readable', onReadable).on('end', onReadable).on('error', settle).on('close', onClose);
    });
  }
}

/** How much of a refused upload's remaining body is read (and dropped) so the client gets the answer. */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;
const DISCARD_LIMIT_MS = 10_000;

function discardRest(req: Request, maxBytes: number, maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', count);
      resolve();
    };
    const count = (piece: Buffer) => {
      seen += piece.length;
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    req.on('data', count);
    req.once('end', done);
    req.once('error', done);
    req.once('close', done);
    req.resume();
  });
}

/** A session's side of the cache: streamed uploads, and the tool calls its model makes. */
@ApiTags('tool-outputs')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions/:sessionId')
export class SessionToolOutputsController {
  constructor(private readonly outputs: ToolOutputsService) {}

  @Post('tool-outputs')
  @ApiOperation({
    summary: 'Upload a tool output as a stream (text/plain or application/octet-stream, stored byte-exact); returns its ref and in-context view',
  })
  @ApiConsumes(...UPLOAD_TYPES)
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  async upload(
    @TenantId() tenantId: string,
    @Param('sessionId') sessionId: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (!UPLOAD_TYPES.includes(mediaType)) {
      throw new UnsupportedMediaTypeException(`Upload the output as ${UPLOAD_TYPES.join(' or ')}`);
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity') throw new UnsupportedMediaTypeException('Content-Encoding is not supported: the bytes are stored as sent');
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    try {
      const result = await this.outputs.upload(tenantId, sessionId, bodyPieces(req), declared);
      res.status(201);
      return result;
    } catch (error) {
      // Refused before the whole body was read (too large, session gone). Answering at once and
      // closing makes a client still sending fail with EPIPE instead of reading the answer, so a
      // bounded rest of the body is read and discarded first; beyond that bound, the connection is cut.
      if (!req.complete) {
        res.setHeader('connection', 'close');
        await discardRest(req, DISCARD_LIMIT_BYTES, DISCARD_LIMIT_MS);
      }
      throw error;
    }
  }

  @Post('tool-calls')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Execute a tool_output_cache or tool_output_cache_grep call as the model produced it; returns the text to hand back to the model',
  })
  call(@TenantId() tenantId: string, @Param('sessionId') sessionId: string, @Body() body: ToolCallDto) {
    return this.outputs.callTool(tenantId, sessionId, body.name, body.arguments);
  }
}
