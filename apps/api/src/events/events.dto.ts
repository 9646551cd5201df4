import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { EVENT_TYPES, EventType } from '@app/domain';
import { MinSeqParam } from '../http/min-seq';

export class ReadEventsQuery {
  // Bounded: a larger number loses precision in JS and overflows bigint in SQL (a 500).
  @ApiPropertyOptional({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  afterSeq?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10000)
  limit?: number;

  @MinSeqParam()
  minSeq?: number;

  @ApiPropertyOptional({
    description: 'Only events of these types, comma-separated (e.g. `tool_outputs.pruned,tool_results.archived`); the page is then full or the last',
    example: 'compaction.completed,tool_outputs.pruned',
  })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',') : value))
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(EVENT_TYPES.length) @IsIn(EVENT_TYPES, { each: true })
  types?: EventType[];
}
