import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppConfig } from './app-config';
import { EnvDto } from './env.dto';

/** Local development token, refused in production. */
const DEV_ADMIN_TOKEN = 'dev-admin-token-change-me';

export const APP_ROLE = 'session_store_app';
export const SWEEPER_ROLE = 'session_store_sweeper';

function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  return u.toString();
}

export class ConfigError extends Error {}

/** Reads and validates the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new EnvDto());
  const input = Object.fromEntries(Object.entries(env).filter(([k, v]) => v !== undefined && v !== '' && (known.includes(k) || k.endsWith('_URL'))));
  const dto = plainToInstance(EnvDto, input, { exposeDefaultValues: true });
  const errors = validateSync(dto, { whitelist: true });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  if (dto.NODE_ENV === 'production' && !dto.ADMIN_TOKEN) throw new ConfigError('Invalid configuration:\n  ADMIN_TOKEN is required in production');
  return {
    env: dto.NODE_ENV,
    database: {
      ownerUrl: dto.DATABASE_URL,
      appUrl: dto.APP_DATABASE_URL ?? withUser(dto.DATABASE_URL, APP_ROLE),
      sweeperUrl: dto.SWEEPER_DATABASE_URL ?? withUser(dto.DATABASE_URL, SWEEPER_ROLE),
      poolSize: dto.DB_POOL_SIZE,
    },
    redis: { url: dto.REDIS_URL, prefix: dto.QUEUE_PREFIX },
    http: { host: dto.HOST, port: dto.PORT, maxBodyBytes: dto.MAX_BODY_BYTES, maxJsonDepth: dto.MAX_JSON_DEPTH },
    adminToken: dto.ADMIN_TOKEN ?? DEV_ADMIN_TOKEN,
    limits: { maxEventsPerAppend: dto.MAX_EVENTS_PER_APPEND, maxPageSize: dto.MAX_PAGE_SIZE },
    auth: { apiKeyCacheTtlMs: dto.API_KEY_CACHE_TTL_MS },
    idempotency: { ttlHours: dto.IDEMPOTENCY_TTL_HOURS },
    outbox: { sweepIntervalMs: dto.OUTBOX_SWEEP_INTERVAL_MS, graceMs: dto.OUTBOX_GRACE_MS },
    worker: { concurrency: dto.WORKER_CONCURRENCY },
    logLevel: dto.LOG_LEVEL,
  };
}
