import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, AppConfig, BearerSecret } from '@app/config';
import { DomainError } from '@app/domain';
import { JsonBodyReader } from '../http/body-parsing';
import { addRequestLogFields } from '../http/request-logging';
import { ApiKeysService, Principal } from './api-keys.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { TenantLimitsService } from '../limits/tenant-limits';

type AuthedRequest = Request & { principal?: Principal };

function bearer(request: Request): string {
  const header = request.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

/**
 * Tenant routes: a valid API key of the tenant. The JSON body is read only
 * once the key is accepted (before the rate limits, which charge its size);
 * a refused request is answered without it.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly tenantLimits: TenantLimitsService,
    private readonly body: JsonBodyReader,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthedRequest>();
    request.principal = await this.keys.authenticate(bearer(request), request.ip);
    // Known from here on: a refusal or failure below (suspension, rate limit, the policy's look-up meeting an outage) is logged with them.
    addRequestLogFields(request, { tenantId: request.principal.tenantId, sessionId: request.params?.sessionId as string | undefined });
    if (request.principal.suspended) {
      throw new DomainError('forbidden', 'tenant_suspended', 'This tenant is suspended; its API keys are refused until an administrator reinstates it');
    }
    const response = context.switchToHttp().getResponse<Response>();
    await this.body.read(request, response);
    await this.tenantLimits.admit(request.principal.tenantId, request, response);
    return true;
  }
}

/**
 * Admin routes: the ADMIN_TOKEN, compared in constant time. Wrong tokens
 * count against the client's address as bad API keys do (AUTH_FAILURE_LIMIT);
 * a blocked address is refused before the comparison, so it learns nothing
 * more, even from the right token, until its window passes. The JSON body
 * is read only once the token matched.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly token: BearerSecret;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly failures: AuthFailureLimiter,
    private readonly body: JsonBodyReader,
  ) {
    this.token = new BearerSecret(config.adminToken);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const address = request.ip ?? 'unknown';
    await this.failures.refuseIfBlocked(address);
    if (this.token.matches(request.headers.authorization)) {
      await this.body.read(request, context.switchToHttp().getResponse<Response>());
      return true;
    }
    await this.failures.record(address);
    throw new DomainError('unauthorized', 'invalid_admin_token', 'Missing or wrong admin token');
  }
}

/** `/metrics`: open unless METRICS_TOKEN is set, then that bearer token. */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly token: BearerSecret | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.token = config.metricsToken === null ? null : new BearerSecret(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.token || this.token.matches(context.switchToHttp().getRequest<Request>().headers.authorization)) return true;
    throw new DomainError('unauthorized', 'invalid_metrics_token', 'Missing or wrong metrics token');
  }
}

/** The tenant of the authenticated API key. */
export const TenantId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const principal = context.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!principal) throw new DomainError('unauthorized', 'invalid_api_key', 'Not authenticated');
  return principal.tenantId;
});

/** The id of the authenticated API key. */
export const ApiKeyId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const principal = context.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!principal) throw new DomainError('unauthorized', 'invalid_api_key', 'Not authenticated');
  return principal.keyId;
});
