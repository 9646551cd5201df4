import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { DEFAULT_GREP_LIMIT, DEFAULT_MAX_PATTERN_LENGTH, GREP_MAX_CONTEXT, GREP_MAX_LIMIT, READ_DEFAULT_LIMIT, READ_MAX_LIMIT } from '@app/domain/tool-output';

const toBoolean = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

export class ReadToolOutputQuery {
  @ApiPropertyOptional({ description: '1-based line number to start from', minimum: 1, default: 1 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  offset?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: READ_MAX_LIMIT, default: READ_DEFAULT_LIMIT })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(READ_MAX_LIMIT)
  limit?: number;
}

export class GrepToolOutputQuery {
  @ApiProperty({ description: `RE2 syntax (no backreferences or lookaround), at most ${DEFAULT_MAX_PATTERN_LENGTH} characters` })
  @IsString() @MinLength(1)
  pattern: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  ignoreCase?: boolean;

  @ApiPropertyOptional({ description: 'Lines of context around each match', minimum: 0, maximum: GREP_MAX_CONTEXT, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(GREP_MAX_CONTEXT)
  context?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: GREP_MAX_LIMIT, default: DEFAULT_GREP_LIMIT })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(GREP_MAX_LIMIT)
  limit?: number;
}

export class ToolCallDto {
  @ApiProperty({ description: 'tool_output_cache or tool_output_cache_grep', example: 'tool_output_cache' })
  @IsString() @MinLength(1) @MaxLength(256)
  name: string;

  @ApiProperty({
    description: 'The arguments as the model produced them: a JSON object, or its JSON text',
    example: '{"ref_id":"out_x","offset":1,"limit":200}',
    oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }],
  })
  @IsDefined()
  arguments: unknown;
}
