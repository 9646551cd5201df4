import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ID_PATTERN } from '@app/domain';

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

  @ApiPropertyOptional({ description: 'Session configuration (preset and overrides)', type: 'object', additionalProperties: true })
  @IsOptional() @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional() @IsObject()
  metadata?: Record<string, unknown>;
}

export class ListSessionsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional() @IsString() @MaxLength(512)
  cursor?: string;
}

export class UpdateSessionDto {
  @ApiProperty({
    description: 'A config patch, merged deeply into the session overrides (a `preset` re-bases the session); recorded as session.config_changed',
    type: 'object',
    additionalProperties: true,
    example: { compaction: { thresholdRatio: 0.7 }, prune: { enabled: true } },
  })
  @IsObject()
  config: Record<string, unknown>;
}
