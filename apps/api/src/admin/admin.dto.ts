import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { SESSION_RETENTION_ACTIONS, SESSION_RETENTION_IDLE_SECONDS, SessionRetentionAction } from '@app/domain';
import { schemaRef } from '../openapi/responses';

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

const OVERRIDE = 'null drops the override (the configured default applies again); 0 = unlimited';

/** Overrides of the TENANT_* defaults; a key left out keeps its current value. */
export class TenantLimitsDto {
  @ApiPropertyOptional({ type: 'integer', description: `Requests per second across API replicas (TENANT_REQUEST_RATE); ${OVERRIDE}`, nullable: true, example: 200 })
  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  requestsPerSecond?: number | null;

  @ApiPropertyOptional({ type: 'integer', description: `Request-body bytes per second across API replicas (TENANT_BYTE_RATE); ${OVERRIDE}`, nullable: true })
  @IsOptional() @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  bytesPerSecond?: number | null;

  @ApiPropertyOptional({ type: 'integer', description: `Pooled connections its requests may hold at once, per API process (TENANT_MAX_CONNECTIONS); ${OVERRIDE}`, nullable: true })
  @IsOptional() @IsInt() @Min(0) @Max(200)
  maxConnections?: number | null;
}

export class TenantQuotasDto {
  @ApiPropertyOptional({ type: 'integer', description: `Stored event bytes (TENANT_EVENT_BYTES_QUOTA); ${OVERRIDE}`, nullable: true })
  @IsOptional() @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  eventBytes?: number | null;

  @ApiPropertyOptional({ type: 'integer', description: `Stored tool-output bytes (TENANT_TOOL_OUTPUT_BYTES_QUOTA); ${OVERRIDE}`, nullable: true })
  @IsOptional() @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER)
  toolOutputBytes?: number | null;
}

/** The whole setting: both fields, always (null instead turns retention off). */
export class TenantRetentionDto {
  @ApiProperty({
    description: 'Sessions whose last activity (an append, a config change or an unarchive) is older than this many seconds expire',
    minimum: SESSION_RETENTION_IDLE_SECONDS.min,
    maximum: SESSION_RETENTION_IDLE_SECONDS.max,
    example: 30 * 24 * 3600,
  })
  @IsInt() @Min(SESSION_RETENTION_IDLE_SECONDS.min) @Max(SESSION_RETENTION_IDLE_SECONDS.max)
  idleSeconds: number;

  @ApiProperty({
    enum: SESSION_RETENTION_ACTIONS,
    description: 'archive: the session is kept and readable, appends get 409 session_archived until it is unarchived; delete: the session and its tool outputs are deleted',
  })
  @IsIn(SESSION_RETENTION_ACTIONS)
  action: SessionRetentionAction;
}

export class UpdateTenantDto {
  @ApiPropertyOptional({
    description: "Session-config defaults of the tenant, deep-merged into the current ones; every session resolves preset ← tenant ← session",
    allOf: [schemaRef('SessionConfig')],
    example: { preset: 'opencode', compaction: { summarizer: 'openai', model: 'gpt-4.1-mini' } },
  })
  @IsOptional() @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: TenantLimitsDto })
  @IsOptional() @ValidateNested() @Type(() => TenantLimitsDto)
  limits?: TenantLimitsDto;

  @ApiPropertyOptional({ type: TenantQuotasDto })
  @IsOptional() @ValidateNested() @Type(() => TenantQuotasDto)
  quotas?: TenantQuotasDto;

  @ApiPropertyOptional({
    description: "true: the tenant's API keys are refused with 403 tenant_suspended (other API replicas follow within API_KEY_CACHE_TTL_MS); false lifts it",
  })
  @IsOptional() @IsBoolean()
  suspended?: boolean;

  @ApiPropertyOptional({
    type: TenantRetentionDto,
    nullable: true,
    description: "Idle sessions archived or deleted by the worker's retention job (every RETENTION_INTERVAL_MS); null turns it off (the default)",
  })
  @IsOptional() @ValidateNested() @Type(() => TenantRetentionDto)
  retention?: TenantRetentionDto | null;
}

export class ListTenantsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 100 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional() @IsUUID()
  cursor?: string;
}
