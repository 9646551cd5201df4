import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Tx, Database } from '@app/database';
import { assertPinFits, assertPinned, pinAddedEvent, pinRemovedEvent, pinsInForce, pinTokens, sessionSettings } from '@app/domain';
import { readWindow, WindowRead } from '@app/event-store';
import { EventsService } from '../events/events.service';
import { requestFingerprint } from '../http/idempotency';
import { sessionNotFound } from '../sessions/session-state';

/** The window under the session lock (the append path took it); the session exists there. */
const lockedWindow = async (tx: Tx, sessionId: string): Promise<WindowRead> => (await readWindow(tx, sessionId))!;

/**
 * Pinned context. Pins are events appended through the client append path
 * (same lock, decider, seqs, outbox, trigger, quotas and RLS), with their
 * own rule on the window read under the session lock: the budget when
 * pinning, the pin's existence when unpinning.
 */
@Injectable()
export class PinsService {
  constructor(
    private readonly db: Database,
    private readonly events: EventsService,
  ) {}

  async add(tenantId: string, sessionId: string, text: string, idempotencyKey?: string) {
    const event = pinAddedEvent(`pin_${randomBytes(12).toString('base64url')}`, text);
    const result = await this.events.appendBatch(tenantId, sessionId, { events: [event] }, {
      idempotencyKey,
      fingerprint: () => requestFingerprint('POST', `/v1/sessions/${sessionId}/pins`, { text }),
      rule: {
        read: (tx) => lockedWindow(tx, sessionId),
        check: (read) => assertPinFits({ pins: pinsInForce(read), text, model: read.session.model, maxTokens: sessionSettings(read.session).config.pins.maxTokens }),
      },
    });
    // A replayed Idempotency-Key answers with the first request's pin.
    const [{ id, seq }] = (result.body as { events: Array<{ id: string; seq: number }> }).events;
    return { status: result.status, body: { pinId: id, seq } };
  }

  async remove(tenantId: string, sessionId: string, pinId: string): Promise<void> {
    await this.events.appendBatch(tenantId, sessionId, { events: [pinRemovedEvent(pinId)] }, {
      fingerprint: () => requestFingerprint('DELETE', `/v1/sessions/${sessionId}/pins/${pinId}`, {}),
      rule: { read: (tx) => lockedWindow(tx, sessionId), check: (read) => assertPinned(pinsInForce(read), pinId) },
    });
  }

  async list(tenantId: string, sessionId: string) {
    const read = await this.db.tenantTx(tenantId, (tx) => readWindow(tx, sessionId));
    if (!read) throw sessionNotFound(sessionId);
    const { model } = read.session;
    const pins = pinsInForce(read).map((pin) => ({ ...pin, tokens: pinTokens(pin.text, model) }));
    return {
      pins,
      tokens: pins.reduce((sum, pin) => sum + pin.tokens, 0),
      maxTokens: sessionSettings(read.session).config.pins.maxTokens,
    };
  }
}
