import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsInt, IsISO8601, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ID_PATTERN, JSON_FILTER_LIMITS, parseJsonFilter } from '@app/domain';
import { schemaRef } from '../openapi/responses';

export class CreateSessionDto {
  @ApiPropertyOptional({ description: 'Client-chosen id; a random UUID when absent', example: 'agent-run-42' })
  @IsOptional() @Matches(ID_PATTERN)
  id?: string;

  @ApiProperty({ example: 'gpt-4.1' })
  @IsString() @MinLength(1) @MaxLength(200)
  model: string;

  @ApiPropertyOptional({ example: 'You are a careful coding agent.' })
  @IsOptional() @IsString() @MaxLength(1_000_000)
  system?: string;

  @ApiPropertyOptional({ description: 'Session configuration (preset and overrides)', allOf: [schemaRef('SessionConfig')] })
  @IsOptional() @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}

export class ForkSessionDto {
  @ApiPropertyOptional({ description: "The source's seq the fork starts from (its view there); the source's head when absent", minimum: 1, example: 12 })
  @IsOptional() @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  atSeq?: number;

  @ApiPropertyOptional({ description: 'Client-chosen id of the fork; a random UUID when absent', example: 'agent-run-42-retry' })
  @IsOptional() @Matches(ID_PATTERN)
  id?: string;

  @ApiPropertyOptional({ description: "The fork's metadata; the source's when absent", type: 'object', additionalProperties: true })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}

/** A JSON query parameter parsed within bounds; what is not JSON stays a string, which @IsObject then refuses (400). */
const jsonFilter = (name: string) => ({ value }: { value: unknown }) => (typeof value === 'string' ? parseJsonFilter(name, value) : value);

/** The `metadata` query parameter: a JSON object the session metadata must contain. */
export const MetadataFilter = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      description: `${description}. At most ${JSON_FILTER_LIMITS.maxBytes} bytes, ${JSON_FILTER_LIMITS.maxDepth} levels of nesting and ${JSON_FILTER_LIMITS.maxKeys} keys and array elements in all; beyond, 400 \`invalid_filter\``,
      type: 'string',
      example: '{"project":"atlas"}',
    }),
    IsOptional(),
    Transform(jsonFilter('metadata')),
    IsObject({ message: 'metadata must be a JSON object' }),
  );

/** A query string's 'true' / 'false'; anything else stays as given and fails @IsBoolean. */
const toBoolean = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

// An ISO 8601 date-time with its offset: without one, PostgreSQL would read it in the server's time zone.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
export const Timestamp = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ description: `${description} (exclusive): an ISO 8601 date-time with an offset`, format: 'date-time', example: '2026-01-31T00:00:00Z' }),
    IsOptional(),
    IsISO8601({ strict: true }),
    Matches(TIMESTAMP, { message: '$property must be an ISO 8601 date-time with an offset (Z or ±hh:mm)' }),
  );

export class ListSessionsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page, with the same filters' })
  @IsOptional() @IsString() @MaxLength(512)
  cursor?: string;

  @MetadataFilter('A JSON object the session metadata must contain (JSON containment, `@>`): nested objects match by their keys, arrays by their elements')
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'A case-insensitive substring of metadata.title', example: 'refactor' })
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200)
  title?: string;

  @Timestamp('Created after')
  createdAfter?: string;

  @Timestamp('Created before')
  createdBefore?: string;

  @Timestamp('Last activity (an append or a config change) after')
  activeAfter?: string;

  @Timestamp('Last activity before')
  activeBefore?: string;

  @ApiPropertyOptional({ description: 'true: archived sessions only; false: unarchived only; absent: both' })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  archived?: boolean;
}

export class UpdateSessionDto {
  @ApiPropertyOptional({
    description: 'A config patch, merged deeply into the session overrides (a `preset` re-bases the session); recorded as session.config_changed',
    allOf: [schemaRef('SessionConfig')],
    example: { compaction: { thresholdRatio: 0.7 }, prune: { enabled: true } },
  })
  @IsOptional() @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'false unarchives the session (counts as activity, so retention waits its full idle age again); true archives it: its log stays readable, appends get 409 session_archived',
  })
  @IsOptional() @IsBoolean()
  archived?: boolean;
}
