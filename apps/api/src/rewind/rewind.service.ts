import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { assertRewindable, sessionRewoundEvent } from '@app/domain';
import { readWindow, unanswerToolCallsAfter } from '@app/event-store';
import { EventsService } from '../events/events.service';
import { requestFingerprint } from '../http/idempotency';

/**
 * Rewind: a `session.rewound` event appended through the append path (same
 * lock, seqs, outbox, quotas and RLS, an archived session refused), checked
 * under the session lock against its head and its pivot, and with the
 * tool-call ledger brought back to toSeq in the same transaction.
 */
@Injectable()
export class RewindService {
  constructor(private readonly events: EventsService) {}

  async rewind(tenantId: string, sessionId: string, toSeq: number, idempotencyKey?: string) {
    const event = sessionRewoundEvent(`rewind_${randomBytes(12).toString('base64url')}`, toSeq);
    const result = await this.events.appendBatch(tenantId, sessionId, { events: [event] }, {
      idempotencyKey,
      fingerprint: () => requestFingerprint('POST', `/v1/sessions/${sessionId}/rewind`, { toSeq }),
      rule: {
        // Under the session lock the append path took: the session exists.
        read: async (tx) => (await readWindow(tx, sessionId))!.session,
        check: (session) => assertRewindable({ toSeq, headSeq: session.headSeq, coveredThroughSeq: session.coveredThroughSeq }),
        write: (tx) => unanswerToolCallsAfter(tx, sessionId, toSeq),
      },
    });
    // A replayed Idempotency-Key answers with the first request's event.
    const body = result.body as { headSeq: number; events: Array<{ id: string; seq: number }> };
    return { status: result.status, body: { seq: body.events[0].seq, toSeq, headSeq: body.headSeq } };
  }
}
