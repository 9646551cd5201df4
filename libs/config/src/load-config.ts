import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppConfig, ProviderEndpoint } from './app-config';
import { EnvDto } from './env.dto';

/** Local development token, refused in production. */
const DEV_ADMIN_TOKEN = 'dev-admin-token-change-me';
/** The one token guards every tenant: long enough that guessing it is hopeless even past the failed-auth limit. */
const MIN_PRODUCTION_ADMIN_TOKEN = 32;

export const APP_ROLE = 'session_store_app';
export const SWEEPER_ROLE = 'session_store_sweeper';
export const GC_ROLE = 'session_store_gc';

function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  return u.toString();
}

export class ConfigError extends Error {}

/** A provider is configured by a key or a base URL (a local OpenAI-compatible server may need no key). */
function endpoint(apiKey: string | undefined, baseUrl: string | undefined): ProviderEndpoint | null {
  return apiKey || baseUrl ? { apiKey: apiKey ?? null, baseUrl: baseUrl ?? null } : null;
}

/** Reads and validates the environment once; throws ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, isTerminal = process.stdout.isTTY === true): AppConfig {
  const known = Object.keys(new EnvDto());
  const input = Object.fromEntries(Object.entries(env).filter(([k, v]) => v !== undefined && v !== '' && (known.includes(k) || k.endsWith('_URL'))));
  const dto = plainToInstance(EnvDto, input, { exposeDefaultValues: true });
  const errors = validateSync(dto, { whitelist: true });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  if (dto.NODE_ENV === 'production' && !dto.ADMIN_TOKEN) throw new ConfigError('Invalid configuration:\n  ADMIN_TOKEN is required in production');
  if (dto.NODE_ENV === 'production' && dto.ADMIN_TOKEN!.length < MIN_PRODUCTION_ADMIN_TOKEN) {
    throw new ConfigError(`Invalid configuration:\n  ADMIN_TOKEN must be at least ${MIN_PRODUCTION_ADMIN_TOKEN} characters in production`);
  }
  if (dto.TENANT_MAX_CONNECTIONS !== undefined && dto.TENANT_MAX_CONNECTIONS > dto.DB_POOL_SIZE) {
    throw new ConfigError('Invalid configuration:\n  TENANT_MAX_CONNECTIONS must not exceed DB_POOL_SIZE');
  }
  if (dto.SUMMARIZER_TIMEOUT_MS >= dto.WORKER_LOCK_DURATION_MS) {
    throw new ConfigError('Invalid configuration:\n  SUMMARIZER_TIMEOUT_MS must be below WORKER_LOCK_DURATION_MS');
  }
  // Node refuses a headers timeout above the request timeout with a message naming neither variable.
  if (dto.HTTP_HEADERS_TIMEOUT_MS > dto.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  const clusterNodes = dto.REDIS_CLUSTER_NODES?.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host, port: Number(port) };
  }) ?? null;
  if (clusterNodes?.some((node) => node.port < 1 || node.port > 65535)) {
    throw new ConfigError('Invalid configuration:\n  REDIS_CLUSTER_NODES: a port is outside 1-65535');
  }
  return {
    env: dto.NODE_ENV,
    database: {
      ownerUrl: dto.DATABASE_URL,
      appUrl: dto.APP_DATABASE_URL ?? withUser(dto.DATABASE_URL, APP_ROLE),
      readUrl: dto.APP_READ_DATABASE_URL ?? null,
      sweeperUrl: dto.SWEEPER_DATABASE_URL ?? withUser(dto.DATABASE_URL, SWEEPER_ROLE),
      gcUrl: dto.GC_DATABASE_URL ?? withUser(dto.DATABASE_URL, GC_ROLE),
      poolSize: dto.DB_POOL_SIZE,
      citus: dto.DATABASE_DISTRIBUTION === 'citus' ? { shardCount: dto.CITUS_SHARD_COUNT } : null,
    },
    redis: {
      url: dto.REDIS_URL,
      clusterNodes,
      prefix: dto.REDIS_CLUSTER_NODES ? `{${dto.QUEUE_PREFIX}}` : dto.QUEUE_PREFIX,
      namespace: dto.QUEUE_PREFIX,
    },
    http: { host: dto.HOST, port: dto.PORT, maxBodyBytes: dto.MAX_BODY_BYTES, maxJsonDepth: dto.MAX_JSON_DEPTH, requestTimeoutMs: dto.HTTP_REQUEST_TIMEOUT_MS, headersTimeoutMs: dto.HTTP_HEADERS_TIMEOUT_MS },
    adminToken: dto.ADMIN_TOKEN ?? DEV_ADMIN_TOKEN,
    metricsToken: dto.METRICS_TOKEN ?? null,
    limits: { maxEventsPerAppend: dto.MAX_EVENTS_PER_APPEND, maxPageSize: dto.MAX_PAGE_SIZE },
    tenants: {
      limits: {
        requestsPerSecond: dto.TENANT_REQUEST_RATE,
        bytesPerSecond: dto.TENANT_BYTE_RATE,
        maxConnections: dto.TENANT_MAX_CONNECTIONS ?? Math.ceil(dto.DB_POOL_SIZE / 2),
      },
      quotas: { eventBytes: dto.TENANT_EVENT_BYTES_QUOTA, toolOutputBytes: dto.TENANT_TOOL_OUTPUT_BYTES_QUOTA },
      connectionWaitMs: dto.TENANT_CONNECTION_WAIT_MS,
    },
    auth: { apiKeyCacheTtlMs: dto.API_KEY_CACHE_TTL_MS, failureLimit: dto.AUTH_FAILURE_LIMIT, failureWindowSeconds: dto.AUTH_FAILURE_WINDOW_S },
    idempotency: { ttlHours: dto.IDEMPOTENCY_TTL_HOURS },
    outbox: { sweepIntervalMs: dto.OUTBOX_SWEEP_INTERVAL_MS, graceMs: dto.OUTBOX_GRACE_MS },
    worker: { concurrency: dto.WORKER_CONCURRENCY, lockDurationMs: dto.WORKER_LOCK_DURATION_MS, stalledIntervalMs: dto.WORKER_STALLED_INTERVAL_MS, port: dto.WORKER_PORT },
    summarizer: {
      timeoutMs: dto.SUMMARIZER_TIMEOUT_MS,
      retryBackoffMs: dto.SUMMARIZER_RETRY_BACKOFF_MS,
      openai: endpoint(dto.OPENAI_API_KEY, dto.OPENAI_BASE_URL),
      anthropic: endpoint(dto.ANTHROPIC_API_KEY, dto.ANTHROPIC_BASE_URL),
    },
    toolOutput: {
      maxUploadBytes: dto.MAX_TOOL_OUTPUT_BYTES,
      retentionSeconds: dto.TOOL_OUTPUT_RETENTION_SECONDS,
      gcIntervalMs: dto.TOOL_OUTPUT_GC_INTERVAL_MS,
      grepTimeLimitMs: dto.GREP_TIME_LIMIT_MS,
      grepMaxScanBytes: dto.GREP_MAX_SCAN_BYTES,
      grepThreads: dto.GREP_THREADS,
      uploadIdleTimeoutMs: dto.UPLOAD_IDLE_TIMEOUT_MS,
      uploadsPerTenant: dto.UPLOADS_PER_TENANT,
      uploadStagingTtlSeconds: dto.UPLOAD_STAGING_TTL_S,
    },
    prune: { jobDelayMs: dto.PRUNE_JOB_DELAY_MS },
    search: { indexDelayMs: dto.SEARCH_INDEX_DELAY_MS, indexDuty: dto.SEARCH_INDEX_DUTY_PERCENT / 100, sweepIntervalMs: dto.SEARCH_SWEEP_INTERVAL_MS, maxMatches: dto.SEARCH_MAX_MATCHES, unindexedEvents: dto.SEARCH_UNINDEXED_EVENTS },
    retention: { intervalMs: dto.RETENTION_INTERVAL_MS },
    reconciler: { intervalMs: dto.RECONCILE_INTERVAL_MS, afterMs: dto.RECONCILE_AFTER_MS, maxAttempts: dto.RECONCILE_MAX_ATTEMPTS, outboxRetentionHours: dto.OUTBOX_RETENTION_HOURS },
    logLevel: dto.LOG_LEVEL,
    logFormat: dto.LOG_FORMAT ?? (isTerminal ? 'pretty' : 'json'),
    shutdownTimeoutMs: dto.SHUTDOWN_TIMEOUT_MS,
    sse: { heartbeatMs: dto.SSE_HEARTBEAT_MS, maxStreamsPerTenant: dto.SSE_MAX_STREAMS_PER_TENANT },
  };
}

/**
 * For entry points: a bad environment is a message naming each variable
 * and exit 1, not a stack trace.
 */
export function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
