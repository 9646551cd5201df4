// Jest's module loader cannot require an ES module without --experimental-vm-modules; Node's
// own require can (22.12+). A test environment is loaded by Node itself, so it requires the
// ESM-only Claude Agent SDK and hands the module to the spec (claude-agent-sdk.js reads it).
const { TestEnvironment } = require('jest-environment-node');

module.exports = class ClaudeAgentSdkEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__claudeAgentSdk = require('@anthropic-ai/claude-agent-sdk');
  }
};
