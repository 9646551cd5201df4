/**
 * Pinned context: text the user wants the model to keep seeing
 * as written. Pins live in the log as `pin.added` / `pin.removed`; a pivot
 * carries the pins in force at its cut (compaction.completed `pins`), so a
 * view folds only its window's pin events onto them. The view shows them
 * verbatim in one message right after the pivot's prefix; no summarizer
 * ever rewrites them, within a per-session token budget (`pins.maxTokens`).
 */
import { DomainError, invalid } from '../errors';
import type { Message, NewEvent, Pin, StoredEvent } from '../events';
import { tokenizerFor } from '../models';
import { countTokens } from '../tokens';

/** Metadata kind of the view's pinned-context message. */
export const PINNED_CONTEXT_KIND = 'pinned_context';

/** The first text part of that message: tells the model what the parts after it are. */
export const PINNED_CONTEXT_HEADER = 'Pinned context (set by the user, kept verbatim and always in force):';

/** The pins after `events` (seq order) applied to those in force before them. */
export function foldPins(initial: readonly Pin[], events: readonly StoredEvent[]): Pin[] {
  let pins = [...initial];
  for (const event of events) {
    if (event.type === 'pin.added') pins.push({ pinId: event.data.pinId, text: event.data.text, seq: event.seq });
    else if (event.type === 'pin.removed') pins = pins.filter((pin) => pin.pinId !== event.data.pinId);
  }
  return pins;
}

/** The pins in force at the end of a window read: the pivot's, then the pin events after its coveredThroughSeq. */
export function pinsInForce(window: { pivot: StoredEvent<'compaction.completed'> | null; events: readonly StoredEvent[] }): Pin[] {
  const covered = window.pivot?.data.coveredThroughSeq ?? 0;
  return foldPins(window.pivot?.data.pins ?? [], window.events.filter((event) => event.seq > covered));
}

/** The message the view shows right after the prefix: a header, then each pin as its own text part; null without pins. */
export function pinnedContextMessage(pins: readonly Pin[]): Message | null {
  if (pins.length === 0) return null;
  return {
    id: 'pinned-context',
    role: 'user',
    parts: [{ type: 'text', text: PINNED_CONTEXT_HEADER }, ...pins.map((pin) => ({ type: 'text' as const, text: pin.text }))],
    metadata: { kind: PINNED_CONTEXT_KIND, userVisible: false },
  };
}

/** A pin's size as the budget counts it: the session model's tokenizer over its text. */
export function pinTokens(text: string, model: string): number {
  return countTokens([text], tokenizerFor(model));
}

export const pinNotFound = (pinId: string) =>
  new DomainError('not_found', 'pin_not_found', `Pin ${JSON.stringify(pinId.slice(0, 200))} does not exist in this session`);

/** The event that pins `text`; its id is the pin's id. Blank text is a 400. */
export function pinAddedEvent(pinId: string, text: string): NewEvent<'pin.added'> {
  if (text.trim() === '') throw invalid('invalid_field', 'text must not be blank', { path: '$.text' });
  return { id: pinId, type: 'pin.added', data: { pinId, text } };
}

export function pinRemovedEvent(pinId: string): NewEvent<'pin.removed'> {
  return { id: `${pinId}.removed`, type: 'pin.removed', data: { pinId } };
}

export interface PinBudgetInput {
  /** The pins in force now. */
  pins: readonly Pin[];
  text: string;
  model: string;
  /** The session's pins.maxTokens. */
  maxTokens: number;
}

/**
 * Refuses a pin that would take the session's pins over their budget: 413
 * `pin_budget_exceeded`. Nothing is evicted to make room: a pin goes only
 * when the user removes it.
 */
export function assertPinFits(input: PinBudgetInput): void {
  const { pins, text, model, maxTokens } = input;
  const usedTokens = pins.reduce((sum, pin) => sum + pinTokens(pin.text, model), 0);
  const tokens = pinTokens(text, model);
  if (usedTokens + tokens > maxTokens) {
    throw new DomainError(
      'too_large',
      'pin_budget_exceeded',
      `The pin (${tokens} tokens) does not fit the session's pin budget: ${usedTokens} of pins.maxTokens ${maxTokens} are in use`,
      { maxTokens, usedTokens, pinTokens: tokens },
    );
  }
}

/** 404 `pin_not_found` unless the pin is in force (never added, or removed already, is the same answer). */
export function assertPinned(pins: readonly Pin[], pinId: string): void {
  if (!pins.some((pin) => pin.pinId === pinId)) throw pinNotFound(pinId);
}
