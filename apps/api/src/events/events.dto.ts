import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { EVENT_TYPES, EventType } from '@app/domain';
import { MinSeqParam } from '../http/min-seq';

export class NewEventDto {
  @ApiPropertyOptional({ description: 'Client event id; a retry with the same id returns the original seq', example: 'evt-0001' })
  id?: string;

  @ApiProperty({ enum: ['message.added', 'step.finished', 'turn.aborted', 'context.overflowed', 'compaction.requested'] })
  type: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "The type's data. A step.finished's `usage` should come with `contextSeq`, the headSeq of the context the call was sent with: " +
      'usage measured before the latest compaction, or more than 2x away from the view estimate, is not trusted',
    example: { message: { role: 'user', parts: [{ type: 'text', text: 'Fix the failing test in src/app.ts' }] } },
  })
  data: Record<string, unknown>;
}

/** Documented here; validated strictly by the domain's parseAppendBatch. */
export class AppendEventsDto {
  @ApiPropertyOptional({ description: 'The head the client expects; a mismatch is 409 version_conflict', minimum: 0 })
  expectedSeq?: number;

  @ApiProperty({ type: [NewEventDto] })
  events: NewEventDto[];
}

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
