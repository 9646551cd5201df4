import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { once } from 'node:events';
import { APP_CONFIG, AppConfig } from '@app/config';
import { DomainError } from '@app/domain';
import { requestLogFields } from '../http/request-logging';
import { EventsService } from './events.service';
import { SessionHeads } from './events-stream.heads';
import { StreamAccess, StreamEndReason, WatchedStream } from './stream-access';

/** What a client over the cap is told to wait: streams are long-lived, so a slot frees slowly. */
const RETRY_AFTER_SECONDS = 5;

type Page = Awaited<ReturnType<EventsService['read']>>;

/**
 * The live event stream (Server-Sent Events): each event of the raw log,
 * as GET .../events renders it, is one message with `id:` its seq. A stream
 * reads PostgreSQL (the source of truth) from the last seq it sent whenever
 * SessionHeads wakes it, and on every heartbeat as a safety net (a lost
 * message, Redis down), so a reconnect with Last-Event-ID neither misses
 * nor repeats an event. At most SSE_MAX_STREAMS_PER_TENANT per tenant in
 * this process; all of them end when the process starts to drain. When its
 * access goes (StreamAccess) a stream ends with a final `end` event saying
 * why, which a drain does not send: the client should not reconnect.
 */
@Injectable()
export class EventStreamsService {
  private readonly logger = new Logger(EventStreamsService.name);
  private readonly perTenant = new Map<string, number>();
  private readonly ends = new Set<() => void>();
  private closing = false;

  constructor(
    private readonly events: EventsService,
    private readonly heads: SessionHeads,
    private readonly access: StreamAccess,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Streams the session's log after `afterSeq` into `res`, for the API key
   * `keyId`, until the client goes, its access goes or the process drains.
   * A 404 (unknown or another tenant's session), 409 (archived session),
   * 429, or the guard's answer to access that went while the stream opened,
   * is thrown before any byte is written.
   */
  async stream(tenantId: string, keyId: string, sessionId: string, afterSeq: number, res: Response): Promise<void> {
    if (this.closing) throw new DomainError('unavailable', 'shutting_down', 'This API process is stopping; reconnect', { retryAfter: 1 });
    const { maxStreamsPerTenant, heartbeatMs } = this.config.sse;
    const held = this.perTenant.get(tenantId) ?? 0;
    if (held >= maxStreamsPerTenant) {
      throw new DomainError('rate_limited', 'too_many_streams', `This tenant already has ${maxStreamsPerTenant} event streams open; close one or retry later`, {
        retryAfter: RETRY_AFTER_SECONDS,
        limit: maxStreamsPerTenant,
      });
    }
    // Taken before the first read, so concurrent opens cannot overshoot the cap.
    this.perTenant.set(tenantId, held + 1);
    const release = () => {
      const left = this.perTenant.get(tenantId)! - 1;
      if (left === 0) this.perTenant.delete(tenantId);
      else this.perTenant.set(tenantId, left);
    };

    let lastSeq = afterSeq;
    /** The newest head a wake-up announced: a lagging read replica is not trusted below it. */
    let minSeq = 0;
    const read = () => this.events.read(tenantId, sessionId, { afterSeq: lastSeq, minSeq });
    /** Access checks under way (StreamAccess): no event is sent while any is. */
    let holds = 0;
    /** Set when access went before the response began. */
    let endedEarly: StreamEndReason | null = null;
    let finish = (reason: StreamEndReason) => {
      endedEarly ??= reason;
    };
    let resume: () => void = () => undefined;
    const watched: WatchedStream = {
      tenantId,
      keyId,
      sessionId,
      hold: () => {
        holds += 1;
      },
      settle: (reason) => {
        holds -= 1;
        if (reason) finish(reason);
        else if (holds === 0) resume();
      },
    };
    // Watched before access is read: a change after the read reaches the watch, one before it shows in the read.
    const unwatch = this.access.watch(watched);
    let first: Page;
    try {
      const [page, reason] = await Promise.all([read(), this.access.reasonToEnd(tenantId, keyId, sessionId)]);
      const gone = reason ?? endedEarly;
      if (gone) throw this.access.refusal(gone, sessionId);
      first = page;
    } catch (error) {
      unwatch();
      release();
      throw error;
    }

    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-store, no-transform');
    // Nginx and similar proxies buffer responses unless told not to.
    res.setHeader('x-accel-buffering', 'no');
    // One stream per connection: once it ends (a drain) the socket closes rather than idle in keep-alive, holding the drain up.
    res.setHeader('connection', 'close');
    res.flushHeaders();

    /** False once the response ended (drain, deletion) or the client went. */
    const open = () => !res.writableEnded && !res.destroyed;
    const end = () => {
      if (open()) res.end();
    };
    finish = (reason) => {
      if (open()) res.end(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    };
    const write = async (text: string) => {
      if (!res.write(text)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    };
    /** Sends a page; true when more of the log follows it. */
    const send = async (page: Page) => {
      for (const event of page.events) {
        if (!open() || holds > 0) return false;
        await write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${event.json.join('')}\n\n`);
        lastSeq = event.seq;
      }
      return page.nextAfterSeq !== null;
    };
    const catchUp = async () => {
      while (open() && (await send(await read())));
    };

    // One reader at a time; a wake-up during a read runs another after it, so nothing committed meanwhile waits for the poll.
    let reading: Promise<void> | null = null;
    let again = false;
    const pump = (run: () => Promise<void> = catchUp) => {
      if (!open() || holds > 0) return;
      if (reading) {
        again = true;
        return;
      }
      again = false;
      reading = run()
        .catch((error: unknown) => {
          // Gone meanwhile (the session, or its tenant): nothing more will come. Anything else (PostgreSQL down): the next heartbeat retries.
          if (error instanceof DomainError && error.kind === 'not_found') {
            return this.access.reasonToEnd(tenantId, keyId, sessionId).then(
              (reason) => finish(reason ?? 'session_deleted'),
              () => finish('session_deleted'),
            );
          }
          this.logger.warn({
            ...requestLogFields(res.req),
            msg: `event stream of session ${sessionId}: read failed, retrying on the next heartbeat: ${error instanceof Error ? error.message : String(error)}`,
          });
        })
        .finally(() => {
          reading = null;
          if (again) pump();
        });
    };
    const wake = (headSeq: number | null) => {
      if (headSeq !== null) {
        minSeq = Math.max(minSeq, headSeq);
        if (headSeq <= lastSeq) return;
      }
      pump();
    };

    const unlisten = this.heads.listen(tenantId, sessionId, wake);
    const heartbeat = setInterval(() => {
      if (open()) res.write(': heartbeat\n\n');
      pump();
    }, heartbeatMs);
    this.ends.add(end);
    resume = () => pump();
    res.once('close', () => {
      clearInterval(heartbeat);
      unlisten();
      unwatch();
      this.ends.delete(end);
      release();
    });
    // After listening: whatever committed since the first read is read again from lastSeq.
    pump(async () => {
      await send(first);
      await catchUp();
    });
  }

  /** The process drains: every open stream ends now (clients reconnect elsewhere with Last-Event-ID), new ones are refused. */
  endAll(): void {
    this.closing = true;
    for (const end of [...this.ends]) end();
  }
}
