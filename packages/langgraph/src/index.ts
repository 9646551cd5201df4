export { SessionStoreSaver } from './saver';
export type { SessionStoreSaverOptions } from './saver';
