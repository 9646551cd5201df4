import { Body, Controller, Delete, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminGuard } from '../auth/guards';
import { CreateTenantDto, IssueApiKeyDto, UpdateTenantDto } from './admin.dto';
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

  @Patch(':tenantId')
  @ApiOperation({ summary: "Change the tenant's session-config defaults (deep-merged patch)" })
  changeConfig(@Param('tenantId') tenantId: string, @Body() dto: UpdateTenantDto) {
    return this.admin.changeConfig(tenantId, dto.config);
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
