import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ROLES, SEARCH_QUERY_LIMITS } from '@app/domain';
import { MetadataFilter, Timestamp } from '../sessions/sessions.dto';

export class SearchQuery {
  @ApiProperty({
    description:
      'Words (all must match, in any order), `"quoted phrases"` (adjacent, in order) and prefixes (`refund*`); a path or identifier (`src/payments/refund.ts`, `ERR_OSSL_EVP_UNSUPPORTED`) matches as the phrase of its parts; text without spaces (Japanese, Chinese, Thai) as a substring. ' +
      'Case-insensitive; no stemming (docs/lifecycle.md#search). 400 `invalid_query` without a word or over the bounds',
    minLength: 1,
    maxLength: SEARCH_QUERY_LIMITS.maxLength,
    example: 'refund "rounding bug"',
  })
  @IsString() @MinLength(1) @MaxLength(SEARCH_QUERY_LIMITS.maxLength)
  q: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page, with the same q and filters' })
  @IsOptional() @IsString() @MaxLength(1024)
  cursor?: string;

  @MetadataFilter("A JSON object the hit's session metadata must contain (as `GET /v1/sessions?metadata=`)")
  metadata?: Record<string, unknown>;

  @Timestamp('Events written after')
  from?: string;

  @Timestamp('Events written before')
  to?: string;

  @ApiPropertyOptional({ description: 'Only message parts of these roles, comma-separated (`user,assistant`); excludes summaries, pins and the system prompt', example: 'assistant,tool' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',') : value))
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(ROLES.length) @IsIn(ROLES, { each: true })
  role?: string[];

  @ApiPropertyOptional({ description: 'Only tool calls and results of this tool (its name, exactly)', example: 'bash' })
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200)
  tool?: string;
}

/** Inside one session: its own metadata needs no filter. */
export class SessionSearchQuery extends OmitType(SearchQuery, ['metadata'] as const) {}
