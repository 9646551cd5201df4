import { NativeMessage } from '../view/parse';

/** A provider's response object read: the assistant's messages, and the step's usage and finish reason in the provider's own terms. */
export interface NativeStep {
  messages: NativeMessage[];
  /** Validated and mapped by step.finished's own rules (usage.ts); absent when the provider reported none. */
  usage?: unknown;
  finishReason?: string;
}
