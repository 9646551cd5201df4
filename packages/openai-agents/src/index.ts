export { SessionStoreSession } from './session';
export type { SessionStoreSessionOptions } from './session';
export { toAgentItems, toResponsesItems, UnsupportedItemError } from './items';
