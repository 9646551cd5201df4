import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/guards';
import { CreateTenantDto, IssueApiKeyDto, ListTenantsQuery, UpdateTenantDto } from './admin.dto';
import { AdminService } from './admin.service';

@ApiTags('admin')
@ApiBearerAuth()
@UseGuards(AdminGuard)
@Controller('v1/admin/tenants')
export class AdminController {
  constructor(private readonly admin: AdminService) {}

  @Post()
  @ApiOperation({ summary: 'Create a tenant; its first API key is returned once' })
  createTenant(@Body() dto: CreateTenantDto) {
    return this.admin.createTenant(dto.name);
  }

  @Get()
  @ApiOperation({ summary: 'List tenants with their effective limits and quotas and their storage usage, paged by cursor' })
  listTenants(@Query() query: ListTenantsQuery) {
    return this.admin.listTenants(query.limit, query.cursor);
  }

  @Get(':tenantId')
  @ApiOperation({ summary: 'A tenant with its effective limits and quotas, their overrides, and its storage usage' })
  getTenant(@Param('tenantId') tenantId: string) {
    return this.admin.getTenant(tenantId);
  }

  @Patch(':tenantId')
  @ApiOperation({
    summary: "Change the tenant's session-config defaults (deep-merged patch), its limit and quota overrides (null drops one), and suspend or reinstate it",
  })
  updateTenant(@Param('tenantId') tenantId: string, @Body() dto: UpdateTenantDto) {
    return this.admin.updateTenant(tenantId, dto);
  }

  @Delete(':tenantId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete the tenant with all its data (sessions, events, tool outputs, keys, outbox, idempotency keys, usage)' })
  async deleteTenant(@Param('tenantId') tenantId: string): Promise<void> {
    await this.admin.deleteTenant(tenantId);
  }

  @Post(':tenantId/api-keys')
  @ApiOperation({ summary: 'Issue an API key (returned once)' })
  issueKey(@Param('tenantId') tenantId: string, @Body() dto: IssueApiKeyDto) {
    return this.admin.issueKey(tenantId, dto.name);
  }

  @Delete(':tenantId/api-keys/:keyId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an API key' })
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.admin.revokeKey(tenantId, keyId);
  }
}
