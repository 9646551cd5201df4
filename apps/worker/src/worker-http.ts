import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig, BearerSecret } from '@app/config';
import { Database } from '@app/database';
import { within } from '@app/lifecycle';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';
import { WorkerMetrics } from './worker-metrics';

/** A probe answers within this, whatever PostgreSQL or Redis do. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * The worker's own small HTTP listener (no API routes): `/healthz` (the
 * process lives), `/readyz` (PostgreSQL and Redis both answer: a worker can
 * do nothing without either) and `/metrics`.
 */
@Injectable()
export class WorkerHttp implements OnApplicationShutdown {
  private readonly logger = new Logger(WorkerHttp.name);
  private server?: Server;
  private readonly metricsToken: BearerSecret | null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    @Inject(PRODUCER_REDIS) private readonly redis: RedisClient,
    private readonly metrics: WorkerMetrics,
  ) {
    this.metricsToken = config.metricsToken === null ? null : new BearerSecret(config.metricsToken);
  }

  /** Resolves with the bound port once listening. */
  async listen(): Promise<number> {
    const server = createServer((req, res) => {
      this.handle(req.url ?? '/', req.headers.authorization).then(
        ({ status, type, body }) => res.writeHead(status, { 'Content-Type': type }).end(body),
        (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(error.message),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.worker.port, this.config.http.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    this.logger.log(`worker health and metrics on http://${this.config.http.host}:${port}`);
    return port;
  }

  private async handle(url: string, authorization: string | undefined): Promise<{ status: number; type: string; body: string }> {
    const path = url.split('?')[0];
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const [postgres, redis] = await Promise.all([
        within(this.db.ping(), PROBE_TIMEOUT_MS).then(() => 'ok', () => 'down'),
        within(this.redis.ping(), PROBE_TIMEOUT_MS).then(() => 'ok', () => 'down'),
      ]);
      const ready = postgres === 'ok' && redis === 'ok';
      return json(ready ? 200 : 503, { status: ready ? 'ok' : 'down', postgres, redis });
    }
    if (path === '/metrics' && this.metricsToken && !this.metricsToken.matches(authorization)) {
      const code = 'invalid_metrics_token';
      return {
        status: 401,
        type: 'application/problem+json',
        body: JSON.stringify({ type: `https://session-store.dev/problems/${code}`, title: 'Unauthorized', status: 401, code, detail: 'Missing or wrong metrics token' }),
      };
    }
    if (path === '/metrics') return { status: 200, type: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
    return json(404, { status: 404, code: 'route_not_found' });
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}

function json(status: number, body: unknown) {
  return { status, type: 'application/json', body: JSON.stringify(body) };
}
