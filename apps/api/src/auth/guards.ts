import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@app/config';
import { DomainError } from '@app/domain';
import { addRequestLogFields } from '../http/request-logging';
import { ApiKeysService, Principal } from './api-keys.service';
import { TenantRateLimiter } from './tenant-rate-limiter';

type AuthedRequest = Request & { principal?: Principal };

function bearer(request: Request): string {
  const header = request.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

/** Tenant routes: a valid API key of the tenant. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly rateLimiter: TenantRateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    request.principal = await this.keys.authenticate(bearer(request), request.ip);
    // Known from here on: a refusal or failure below (suspension, rate limit, the policy's look-up meeting an outage) is logged with them.
    addRequestLogFields(request, { tenantId: request.principal.tenantId, sessionId: request.params?.sessionId as string | undefined });
    if (request.principal.suspended) {
      throw new DomainError('forbidden', 'tenant_suspended', 'This tenant is suspended; its API keys are refused until an administrator reinstates it');
    }
    await this.rateLimiter.admit(request.principal.tenantId, request, context.switchToHttp().getResponse());
    return true;
  }
}

/** Admin routes: the ADMIN_TOKEN, compared in constant time. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly expected: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = createHash('sha256').update(config.adminToken).digest();
  }

  canActivate(context: ExecutionContext): boolean {
    const given = createHash('sha256').update(bearer(context.switchToHttp().getRequest<Request>())).digest();
    if (!timingSafeEqual(given, this.expected)) throw new DomainError('unauthorized', 'invalid_admin_token', 'Missing or wrong admin token');
    return true;
  }
}

/** The tenant of the authenticated API key. */
export const TenantId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const principal = context.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!principal) throw new DomainError('unauthorized', 'invalid_api_key', 'Not authenticated');
  return principal.tenantId;
});
