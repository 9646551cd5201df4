export {
  assertPinFits,
  assertPinned,
  foldPins,
  PINNED_CONTEXT_HEADER,
  PINNED_CONTEXT_KIND,
  pinAddedEvent,
  pinNotFound,
  pinnedContextMessage,
  pinsInForce,
  pinRemovedEvent,
  pinTokens,
} from './pins';
export type { PinBudgetInput } from './pins';
