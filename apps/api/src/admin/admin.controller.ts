import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AdminGuard } from '../auth/guards';
import { CreateTenantDto, IssueApiKeyDto, ListTenantsQuery, UpdateTenantDto } from './admin.dto';
import { AdminService } from './admin.service';
import { ADMIN_TOKEN_SCHEME } from '../openapi/document';
import { ADMIN_PROBLEMS, ProblemResponses } from '../openapi/problem';
import { JsonResponse } from '../openapi/responses';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_TOKEN_SCHEME)
@ProblemResponses(...ADMIN_PROBLEMS)
@UseGuards(AdminGuard)
@Controller('v1/admin/tenants')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post()
  @ApiOperation({ summary: 'Create a tenant; its first API key is returned once' })
  @JsonResponse(201, 'TenantCreated', { description: 'Created, with its first API key', location: 'The tenant' })
  @ProblemResponses(413, 415)
  async createTenant(@Body() dto: CreateTenantDto, @Res({ passthrough: true }) res: Response) {
    const created = await this.admin.createTenant(dto.name);
    res.setHeader('location', `/v1/admin/tenants/${created.tenantId}`);
    return created;
  }

  @Get()
  @ApiOperation({ summary: 'List tenants with their effective limits and quotas and their storage usage, paged by cursor' })
  @JsonResponse(200, 'TenantList', { description: 'A page of tenants' })
  listTenants(@Query() query: ListTenantsQuery) {
    return this.admin.listTenants(query.limit, query.cursor);
  }

  @Get(':tenantId')
  @ApiOperation({ summary: 'A tenant with its effective limits and quotas, their overrides, and its storage usage' })
  @JsonResponse(200, 'Tenant', { description: 'The tenant' })
  @ProblemResponses(404)
  getTenant(@Param('tenantId') tenantId: string) {
    return this.admin.getTenant(tenantId);
  }

  @Patch(':tenantId')
  @ApiOperation({
    summary: "Change the tenant's session-config defaults (deep-merged patch), its limit and quota overrides (null drops one), and suspend or reinstate it",
  })
  @JsonResponse(200, 'Tenant', { description: 'The tenant after the change' })
  @ProblemResponses(404, 413, 415)
  updateTenant(@Param('tenantId') tenantId: string, @Body() dto: UpdateTenantDto) {
    return this.admin.updateTenant(tenantId, dto);
  }

  @Delete(':tenantId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete the tenant with all its data (sessions, events, tool outputs, keys, outbox, idempotency keys, usage)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ProblemResponses(404)
  async deleteTenant(@Param('tenantId') tenantId: string): Promise<void> {
    await this.admin.deleteTenant(tenantId);
  }

  @Post(':tenantId/api-keys')
  @ApiOperation({ summary: 'Issue an API key (returned once)' })
  @JsonResponse(201, 'ApiKey', { description: 'Issued', location: 'The key (DELETE it to revoke)' })
  @ProblemResponses(404, 413, 415)
  async issueKey(@Param('tenantId') tenantId: string, @Body() dto: IssueApiKeyDto, @Res({ passthrough: true }) res: Response) {
    const issued = await this.admin.issueKey(tenantId, dto.name);
    res.setHeader('location', `/v1/admin/tenants/${tenantId}/api-keys/${issued.keyId}`);
    return issued;
  }

  @Delete(':tenantId/api-keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ProblemResponses(404)
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.admin.revokeKey(tenantId, keyId);
  }
}
