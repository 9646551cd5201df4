import * as googleAdk from '@google/adk';
import { TestEnvironment } from 'jest-environment-node';

/**
 * @google/adk's CommonJS build requires lodash-es, an ES module, which Jest's
 * module loader cannot require without --experimental-vm-modules; Node's own
 * require can (22.12+). A test environment is loaded by Node itself, so it
 * requires ADK and hands the module to the spec, where `@google/adk`
 * resolves to google-adk.js (see jest.config.js): the spec and the adapter
 * then share one ADK, and so one BaseSessionService.
 */
export default class GoogleAdkEnvironment extends TestEnvironment {
  override async setup(): Promise<void> {
    await super.setup();
    this.global.__googleAdk = googleAdk;
  }
}
