import { Injectable } from '@nestjs/common';
import { Database, ReadDatabase, Tx } from '@app/database';
import { composeSessionView, ContextFormat, PendingMode, renderContext, SessionView } from '@app/domain';
import { renderToolOutputTools } from '@app/domain/tool-output';
import { readWindow, WindowRead } from '@app/event-store';
import { compactionState } from '../compactions/compaction-state';
import { sessionNotFound } from '../sessions/session-view';

/** The token figures the context and the session state both report. */
export function tokenFigures({ view, limits, overflow }: SessionView) {
  return {
    estimated: view.tokens.estimated,
    basis: view.tokens.basis,
    overhead: view.tokens.overhead,
    usable: overflow.usable,
    limit: limits.context,
    threshold: overflow.threshold,
    ratio: overflow.ratio,
  };
}

@Injectable()
export class ContextService {
  constructor(
    private readonly db: Database,
    private readonly reads: ReadDatabase,
  ) {}

  /**
   * Reads the window (cost follows the window, not the history) and composes
   * the view. With `replica`, the read may be served by the read replica: only
   * one that holds the session up to `minSeq` (and `atSeq`) will do.
   */
  async view(
    tenantId: string,
    sessionId: string,
    atSeq?: number,
    pending?: PendingMode,
    replica?: { minSeq?: number },
  ): Promise<{ read: WindowRead; composed: SessionView }> {
    const work = (tx: Tx) => readWindow(tx, sessionId, atSeq);
    const needed = Math.max(replica?.minSeq ?? 0, atSeq ?? 0);
    const read = replica
      ? await this.reads.tenantRead(tenantId, work, (r) => r !== undefined && r.session.headSeq >= needed)
      : await this.db.tenantRead(tenantId, work);
    if (!read) throw sessionNotFound(sessionId);
    return { read, composed: composeSessionView(read.session, read, pending) };
  }

  async context(
    tenantId: string,
    sessionId: string,
    query: { format?: ContextFormat; atSeq?: number; minSeq?: number; pending?: PendingMode; tools?: 'tool_output_cache' },
  ) {
    const format = query.format ?? 'neutral';
    const { read, composed } = await this.view(tenantId, sessionId, query.atSeq, query.pending, { minSeq: query.minSeq });
    const rendered = renderContext(composed.view, format);
    return {
      format,
      model: read.session.model,
      ...('system' in rendered && rendered.system !== undefined ? { system: rendered.system } : {}),
      messages: 'input' in rendered ? rendered.input : rendered.messages,
      tokens: tokenFigures(composed),
      pivotSeq: composed.view.pivotSeq,
      headSeq: read.session.headSeq,
      atSeq: query.atSeq === undefined ? null : Math.min(query.atSeq, read.session.headSeq),
      pendingToolCalls: composed.view.pendingToolCalls,
      repairs: composed.view.repairs,
      compaction: compactionState(read, composed),
      ...(query.tools === 'tool_output_cache' ? { tools: renderToolOutputTools(format) } : {}),
    };
  }
}
