import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

export class CreateTenantDto {
  @ApiProperty({ example: 'acme' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;
}

export class IssueApiKeyDto {
  @ApiPropertyOptional({ example: 'ci' })
  @IsOptional() @IsString() @MaxLength(200)
  name?: string;
}

export class UpdateTenantDto {
  @ApiProperty({
    description: "Session-config defaults of the tenant, deep-merged into the current ones; every session resolves preset ← tenant ← session",
    type: 'object',
    additionalProperties: true,
    example: { preset: 'opencode', compaction: { summarizer: 'openai', model: 'gpt-4.1-mini' } },
  })
  @IsObject()
  config: Record<string, unknown>;
}
