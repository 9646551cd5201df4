export { ServiceSessionStore } from './session-store';
export type { ServiceSessionStoreOptions } from './session-store';
