import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class RequestCompactionDto {
  @ApiPropertyOptional({ default: false, description: 'Answer when the compaction is committed (or timeoutMs passes), not when it is queued' })
  @IsOptional() @IsBoolean()
  wait?: boolean;

  @ApiPropertyOptional({ default: 30_000, minimum: 100, maximum: 300_000, description: 'How long `wait` waits before answering 202 with the state' })
  @IsOptional() @IsInt() @Min(100) @Max(300_000)
  timeoutMs?: number;

  @ApiPropertyOptional({ description: 'Added to the summarizer prompt for this compaction; a request with instructions opens its own marker', maxLength: 65536 })
  @IsOptional() @IsString() @MaxLength(65536)
  instructions?: string;

  @ApiPropertyOptional({ default: false, description: 'Compute the summary and the would-be context without committing anything' })
  @IsOptional() @IsBoolean()
  dryRun?: boolean;
}

export class ListCompactionsQuery {
  @ApiPropertyOptional({ description: 'Markers after this seq (nextAfterSeq of the previous page)', minimum: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  afterSeq?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200)
  limit?: number;

  @ApiPropertyOptional({ enum: ['record'], description: 'Also show each completion\'s structured summary record (the largest field; off by default)' })
  @IsOptional() @IsIn(['record'])
  include?: 'record';
}
