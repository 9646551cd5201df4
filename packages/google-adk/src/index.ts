export { ServiceSessionService } from './session-service';
export type { ServiceSessionServiceOptions } from './session-service';
