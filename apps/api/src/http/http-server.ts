import { createServer, Server, ServerResponse } from 'node:http';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { NestExpressApplication } from '@nestjs/platform-express';

export interface HttpTimeouts {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
}

/**
 * Express under Nest, with the HTTP server built by us: Node checks the
 * header and request timeouts only every `connectionsCheckingInterval`
 * (30 s by default), which made the documented 10 s header limit act as
 * 10–40 s. The interval is a constructor option, so the server is made here.
 */
/** Responses not yet finished, per server: a drain marks them `Connection: close`. */
const inFlight = new WeakMap<Server, Set<ServerResponse>>();

export class TimedExpressAdapter extends ExpressAdapter {
  constructor(private readonly timeouts: HttpTimeouts) {
    super();
  }

  override initHttpServer(): void {
    const server = createServer(
      { requestTimeout: this.timeouts.requestTimeoutMs, headersTimeout: this.timeouts.headersTimeoutMs, connectionsCheckingInterval: 1000 },
      this.getInstance(),
    );
    const responses = new Set<ServerResponse>();
    inFlight.set(server, responses);
    server.on('request', (_req, res: ServerResponse) => {
      responses.add(res);
      res.once('close', () => responses.delete(res));
    });
    this.setHttpServer(server);
  }
}

/**
 * Stops taking connections, lets requests in flight finish for half the
 * time left, then cuts what remains (a stalled upload, a slow reader): its
 * handler sees the abort and releases its connection. Then Nest's shutdown
 * hooks close the pools and queues. Answers given meanwhile close their
 * connection (Node would keep it open for the keep-alive timeout, and the
 * drain would wait for it).
 */
export async function drainHttpApp(app: NestExpressApplication, deadline: number): Promise<void> {
  const server: Server = app.getHttpServer();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  for (const res of inFlight.get(server) ?? []) if (!res.headersSent) res.setHeader('connection', 'close');
  // A request that arrived on a kept-alive connection just before the close.
  server.on('request', (_req, res: ServerResponse) => res.setHeader('connection', 'close'));
  const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, (deadline - Date.now()) / 2));
  await closed;
  clearTimeout(cut);
  await app.close();
}
