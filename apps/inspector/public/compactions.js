// @ts-check
// The compaction view: the open session's compactions, newest first, each
// with its figures, summary and record and the context before and after it;
// what each rewrite cost in prompt cache.

import { api, enc } from './api.js';
import { contextAt } from './context.js';
import { $, el, linkButton, showError } from './dom.js';
import { num, pct } from './format.js';
import { selectTab, tabButton } from './navigation.js';
import { current } from './state.js';
import { renderTimeline, select } from './timeline.js';

export async function loadCompactions() {
  const session = current;
  if (!session) return;
  try {
    /** @type {any[]} */
    const all = [];
    /** @type {any[]} */
    const rewrites = [];
    /** @type {any} */
    let ratios = null;
    let after = 0;
    for (;;) {
      const page = await api(`/v1/sessions/${enc(session.id)}/compactions?afterSeq=${after}&limit=100&include=record`);
      all.push(...page.compactions);
      rewrites.push(...(page.cache?.rewrites ?? []));
      ratios ??= page.cache ?? null;
      if (page.nextAfterSeq === null || page.nextAfterSeq === undefined) break;
      after = page.nextAfterSeq;
    }
    if (session !== current) return;
    session.covered = all.filter((c) => c.status === 'completed' && c.range?.throughSeq).map((c) => ({ fromSeq: c.range.fromSeq ?? 1, throughSeq: c.range.throughSeq }));
    renderTimeline();
    renderCacheCosts(ratios, rewrites);
    renderCompactions(all);
  } catch (error) {
    showError(error);
  }
}

/**
 * What a rewrite cost in prompt cache (docs/compaction.md section 17).
 * @param {{ invalidatedTokens: number | null, rewriteCost: number | null, breakEvenSteps: number | null, repaidAfterSteps: number | null }} cost
 */
function cacheText(cost) {
  if (cost.invalidatedTokens === null) return 'cache: no step before it';
  const repaid = cost.repaidAfterSteps !== null ? `repaid after ${num(cost.repaidAfterSteps)} steps` : cost.breakEvenSteps !== null ? `repays after ${num(cost.breakEvenSteps)} steps` : 'never repaid';
  return `cache: ${num(cost.invalidatedTokens)} invalidated · cost ${num(cost.rewriteCost ?? 0)} · ${repaid}`;
}

/**
 * The session's prompt-cache hit ratios and what each prune and archive cost
 * (compactions carry theirs on their cards).
 * @param {any} ratios @param {any[]} rewrites
 */
function renderCacheCosts(ratios, rewrites) {
  const box = $('compactions-cache');
  if (!ratios) {
    box.replaceChildren();
    return;
  }
  const summary = el('p', {
    text:
      `prompt cache: hit ratio ${pct(ratios.hitRatio)} over ${num(ratios.steps)} steps · ` +
      `${pct(ratios.hitRatioSinceRewrite)} over the ${num(ratios.stepsSinceRewrite)} since the latest rewrite`,
  });
  const rows = rewrites.map((r) =>
    el('div', { className: 'figures' }, [
      el('span', { text: `${r.kind} at seq ${r.seq}` }),
      el('span', { text: `removed ${num(r.removedTokens)}` }),
      el('span', { text: cacheText(r) }),
    ]),
  );
  box.replaceChildren(summary, ...rows);
}

/** @param {any[]} all */
function renderCompactions(all) {
  if (all.length === 0) {
    $('compactions-list').replaceChildren(el('p', { className: 'muted', text: 'No compactions in this session.' }));
    return;
  }
  $('compactions-list').replaceChildren(
    ...all
      .slice()
      .reverse()
      .map((c) => {
        const figures = el('div', { className: 'figures' }, [
          el('span', { text: `status ${c.status}` }),
          el('span', { text: `reason ${c.reason ?? '?'}${c.auto ? ' (auto)' : ''}` }),
          el('span', { text: `strategy ${c.strategy ?? '—'}` }),
          el('span', { text: `model ${c.model ?? '—'}` }),
          el('span', { text: `tokens ${num(c.tokensBefore)} → ${num(c.tokensAfter)}` }),
          el('span', { text: `saved ${num(c.tokensSaved)}` }),
          el('span', { text: c.range ? `covers seq ${c.range.fromSeq ?? 1}..${c.range.throughSeq}` : '' }),
          el('span', { text: c.messagesCompacted !== undefined ? `${num(c.messagesCompacted)} messages compacted` : '' }),
          el('span', { text: typeof c.durationMs === 'number' ? `${num(c.durationMs)} ms` : '' }),
          el('span', { text: c.cache ? cacheText(c.cache) : '' }),
        ]);
        const card = el('div', { className: 'card' }, [el('h3', { text: `Compaction at marker seq ${c.markerSeq}${c.completedSeq ? `, pivot seq ${c.completedSeq}` : ''}` }), figures]);
        if (c.retention !== undefined && c.retention !== null) {
          card.appendChild(el('div', { className: 'part-label', text: 'retention' }));
          card.appendChild(el('pre', { className: 'pre', text: retentionText(c.retention) }));
        }
        if (c.instructions) card.appendChild(el('p', { text: `instructions: ${c.instructions}` }));
        if (Array.isArray(c.failures) && c.failures.length > 0) card.appendChild(el('pre', { className: 'pre', text: `failures: ${JSON.stringify(c.failures, null, 2)}` }));
        const actions = el('div', { className: 'toolbar' });
        // Before: the view just before the pivot landed (the marker's, if none did); after: the view at the pivot.
        const before = c.completedSeq ? c.completedSeq - 1 : c.markerSeq;
        actions.appendChild(linkButton('Context before', () => contextAt(before)));
        if (c.completedSeq) {
          actions.appendChild(linkButton('Context after', () => contextAt(c.completedSeq)));
          actions.appendChild(linkButton('Show pivot in timeline', () => {
            selectTab('timeline');
            select(c.completedSeq);
          }));
        }
        card.appendChild(actions);
        if (typeof c.summary === 'string') {
          card.appendChild(el('div', { className: 'part-label', text: 'summary' }));
          card.appendChild(el('pre', { className: 'pre', text: c.summary }));
        }
        if (typeof c.retain === 'string' && c.retain) {
          card.appendChild(el('div', { className: 'part-label', text: 'retain' }));
          card.appendChild(el('pre', { className: 'pre', text: c.retain }));
        }
        if (c.record && typeof c.record === 'object') card.appendChild(recordDetails(c.record));
        return card;
      }),
  );
}

/** The structured summary record, folded: how many items per section, the whole record on demand. @param {Record<string, unknown>} record */
function recordDetails(record) {
  const sections = Object.entries(record)
    .filter(([, items]) => Array.isArray(items))
    .map(([name, items]) => `${name} ${/** @type {unknown[]} */ (items).length}`);
  const details = el('details', { className: 'record' }, [el('summary', { text: `summary record: ${sections.join(' · ')}` })]);
  details.appendChild(el('pre', { className: 'pre', text: JSON.stringify(record, null, 2) }));
  return details;
}

/** The retention figure: the share of the head's critical facts the new context kept. @param {any} r */
function retentionText(r) {
  if (typeof r !== 'object') return String(r);
  const lines = [`retention ${pct(r.ratio)} (${num(r.kept)} of ${num(r.critical)} critical facts; summarizer alone ${pct(r.summarizerRatio)}; carried forward ${num(r.carried)})`];
  if (Array.isArray(r.missing) && r.missing.length > 0) lines.push('missing:', ...r.missing.map((/** @type {unknown} */ m) => `  - ${String(m)}`));
  return lines.join('\n');
}

/** What a newly opened session starts with. */
export function clearCompactions() {
  $('compactions-list').replaceChildren();
}

tabButton('compactions').addEventListener('click', () => void loadCompactions());
