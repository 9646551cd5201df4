/** The typed configuration the rest of the code receives; nothing else reads process.env. */
export interface AppConfig {
  env: 'development' | 'production' | 'test';
  database: { ownerUrl: string; appUrl: string; sweeperUrl: string; gcUrl: string; poolSize: number };
  redis: { url: string; prefix: string };
  http: { host: string; port: number; maxBodyBytes: number; maxJsonDepth: number; requestTimeoutMs: number; headersTimeoutMs: number };
  adminToken: string;
  limits: { maxEventsPerAppend: number; maxPageSize: number };
  /** Per-tenant defaults; the admin API overrides them tenant by tenant. */
  tenants: { limits: TenantLimits; quotas: TenantQuotas; connectionWaitMs: number };
  auth: { apiKeyCacheTtlMs: number; failureLimit: number; failureWindowSeconds: number };
  idempotency: { ttlHours: number };
  outbox: { sweepIntervalMs: number; graceMs: number };
  worker: { concurrency: number; lockDurationMs: number; stalledIntervalMs: number; port: number };
  summarizer: SummarizerSettings;
  toolOutput: ToolOutputSettings;
  prune: { jobDelayMs: number };
  reconciler: { intervalMs: number; afterMs: number; maxAttempts: number; outboxRetentionHours: number };
  logLevel: string;
  logFormat: 'json' | 'pretty';
  shutdownTimeoutMs: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** What one tenant may do; 0 = unlimited. */
export interface TenantLimits {
  requestsPerSecond: number;
  /** Request-body bytes per second. */
  bytesPerSecond: number;
  /** Pooled connections its transactions may hold at once, per process. */
  maxConnections: number;
}

/** What one tenant may store, in bytes; 0 = unlimited. */
export interface TenantQuotas {
  eventBytes: number;
  toolOutputBytes: number;
}

/** An LLM provider's endpoint; null when the provider is not configured. */
export interface ProviderEndpoint {
  apiKey: string | null;
  baseUrl: string | null;
}

export interface SummarizerSettings {
  timeoutMs: number;
  retryBackoffMs: number;
  openai: ProviderEndpoint | null;
  anthropic: ProviderEndpoint | null;
}

/** The tool-output cache's service-wide limits (per-session view settings live in the session config). */
export interface ToolOutputSettings {
  maxUploadBytes: number;
  retentionSeconds: number;
  gcIntervalMs: number;
  grepTimeLimitMs: number;
  grepMaxScanBytes: number;
  grepThreads: number;
  uploadIdleTimeoutMs: number;
  uploadsPerTenant: number;
  uploadStagingTtlSeconds: number;
}
