/** The typed configuration the rest of the code receives; nothing else reads process.env. */
export interface AppConfig {
  env: 'development' | 'production' | 'test';
  database: { ownerUrl: string; appUrl: string; sweeperUrl: string; poolSize: number };
  redis: { url: string; prefix: string };
  http: { host: string; port: number; maxBodyBytes: number; maxJsonDepth: number };
  adminToken: string;
  limits: { maxEventsPerAppend: number; maxPageSize: number };
  auth: { apiKeyCacheTtlMs: number };
  idempotency: { ttlHours: number };
  outbox: { sweepIntervalMs: number; graceMs: number };
  worker: { concurrency: number };
  logLevel: string;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
