import { Injectable } from '@nestjs/common';
import { Database, ReadDatabase, Tx } from '@app/database';
import { PendingMode, readableView, readBudget, readModelOf, renderContext, SessionReadModel, withToolsBreakpoint } from '@app/domain';
import { renderToolOutputTools } from '@app/domain/tool-output';
import { pivotMarkerSeq, readWindow, WindowRead } from '@app/event-store';
import { Draining } from '../http/draining';
import type { ContextQuery } from './context.dto';
import { sessionNotFound } from '../sessions/session-state';

/** The token figures the context and the session state both report. */
export function tokenFigures({ view, limits, overflow }: Pick<SessionReadModel, 'view' | 'limits' | 'overflow'>) {
  return {
    estimated: view.tokens.estimated,
    basis: view.tokens.basis,
    overhead: view.tokens.overhead,
    expectedGrowth: view.tokens.expectedGrowth,
    usable: overflow.usable,
    limit: limits.context,
    threshold: overflow.threshold,
    // Of the figure reported: a fitted read's own.
    ratio: overflow.usable ? view.tokens.estimated / overflow.usable : overflow.ratio,
  };
}

/** How often a read waiting for a compaction (`wait`) looks at the session's pivot, and after how many looks it reads the window anyway. */
const CONTEXT_WAIT_POLL_MS = 200;
const CONTEXT_WAIT_REREAD = 10;

@Injectable()
export class ContextService {
  constructor(
    private readonly db: Database,
    private readonly reads: ReadDatabase,
    private readonly draining: Draining,
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
  ): Promise<{ read: WindowRead; composed: SessionReadModel }> {
    const work = (tx: Tx) => readWindow(tx, sessionId, atSeq);
    const needed = Math.max(replica?.minSeq ?? 0, atSeq ?? 0);
    const read = replica
      ? await this.reads.tenantRead(tenantId, work, (r) => r !== undefined && r.session.headSeq >= needed)
      : await this.db.tenantRead(tenantId, work);
    if (!read) throw sessionNotFound(sessionId);
    return { read, composed: readModelOf(read, pending) };
  }

  /**
   * The view a model step reads: when it is over the read budget while a
   * compaction is pending or running, waits up to `wait` seconds for that
   * compaction to land, then fits what it has (readableView). Waiting polls
   * the session's pivot marker (one row) every CONTEXT_WAIT_POLL_MS and reads
   * the window again once it moved, or every CONTEXT_WAIT_REREAD polls (a
   * marker can close without a pivot). An `atSeq` read never waits: its past is fixed.
   * Nor does one while the process drains: it answers with what it has before the server closes.
   */
  private async readable(tenantId: string, sessionId: string, query: ContextQuery) {
    const deadline = Date.now() + (query.atSeq === undefined ? (query.wait ?? 0) * 1000 : 0);
    for (;;) {
      const { read, composed } = await this.view(tenantId, sessionId, query.atSeq, query.pending, { minSeq: query.minSeq });
      const state = composed.compaction;
      const usable = composed.overflow.usable;
      const over = usable !== null && composed.view.tokens.estimated > readBudget(composed.limits, usable);
      const marker = state.pendingMarkerSeq;
      if (!over || marker === null || Date.now() >= deadline || this.draining.active) return { read, composed: readableView(composed), state };
      for (let poll = 0; poll < CONTEXT_WAIT_REREAD && Date.now() < deadline && !this.draining.active; poll++) {
        await this.draining.pause(Math.min(CONTEXT_WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
        if (((await this.db.tenantRead(tenantId, (tx) => pivotMarkerSeq(tx, sessionId))) ?? 0) >= marker) break;
      }
    }
  }

  async context(tenantId: string, sessionId: string, query: ContextQuery) {
    const format = query.format ?? 'neutral';
    const { read, composed, state } = await this.readable(tenantId, sessionId, query);
    const breakpoints = query.cacheBreakpoints ?? composed.config.cache.breakpoints;
    const cacheTtl = format === 'anthropic' && breakpoints !== 'off' ? breakpoints : undefined;
    const rendered = renderContext(composed.view, format, { cacheTtl });
    const tools = query.tools === 'tool_output_cache' ? renderToolOutputTools(format) : undefined;
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
      compaction: state,
      fitted: composed.fitted,
      ...(tools ? { tools: cacheTtl ? withToolsBreakpoint(tools, cacheTtl) : tools } : {}),
    };
  }
}
