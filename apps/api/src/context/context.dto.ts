import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { CACHE_BREAKPOINTS, CacheBreakpoints, CONTEXT_FORMATS, ContextFormat, PendingMode } from '@app/domain';
import { MinSeqParam } from '../http/min-seq';

/** The longest a context read waits for a pending compaction (`wait`): beyond it a client is better served by the fitted view. */
export const MAX_CONTEXT_WAIT_SECONDS = 30;

export class ContextQuery {
  @ApiPropertyOptional({ enum: CONTEXT_FORMATS, default: 'neutral' })
  @IsOptional() @IsIn(CONTEXT_FORMATS)
  format?: ContextFormat;

  @ApiPropertyOptional({ description: 'The view exactly as it was after this seq (time travel)', minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  atSeq?: number;

  @MinSeqParam()
  minSeq?: number;

  @ApiPropertyOptional({ enum: ['abort', 'omit'], default: 'abort', description: 'How calls of a trailing assistant turn still running are rendered' })
  @IsOptional() @IsIn(['abort', 'omit'])
  pending?: PendingMode;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_CONTEXT_WAIT_SECONDS,
    default: 0,
    description:
      'Seconds the read may wait, when the view is over the usable window and a compaction is pending or running, for that compaction to land; after it, or without one, the view is fitted (`fitted`)',
  })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(MAX_CONTEXT_WAIT_SECONDS)
  wait?: number;

  @ApiPropertyOptional({
    enum: ['tool_output_cache'],
    description: 'Also return the definitions of tool_output_cache and tool_output_cache_grep in the format, for the model to read truncated outputs',
  })
  @IsOptional() @IsIn(['tool_output_cache'])
  tools?: 'tool_output_cache';

  @ApiPropertyOptional({
    enum: CACHE_BREAKPOINTS,
    description:
      "Anthropic format: `cache_control` breakpoints with this lifetime (`5m`: `{type: 'ephemeral'}`, `1h`: with `ttl: '1h'`) on the system prompt, the end of the pivot's prefix and pins, the last block, and the last tool when `tools` is asked for; at most four. Defaults to the session's `cache.breakpoints`; other formats ignore it",
  })
  @IsOptional() @IsIn(CACHE_BREAKPOINTS)
  cacheBreakpoints?: CacheBreakpoints;
}
