// Jest's module loader cannot require an ES module without --experimental-vm-modules; Node's
// own require can (22.12+). A test environment is loaded by Node itself, so it requires the
// ESM-only Claude Agent SDK and hands the module to the spec (claude-agent-sdk.js reads it).
// The SDK reads CLAUDE_CONFIG_DIR from the real process.env, which the spec's process.env only
// copies: a fresh one is set here, before the copy is taken, so local transcripts stay in it.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

module.exports = class ClaudeAgentSdkEnvironment extends TestEnvironment {
  constructor(config, context) {
    const previous = process.env.CLAUDE_CONFIG_DIR;
    process.env.CLAUDE_CONFIG_DIR = mkdtempSync(join(tmpdir(), 'claude-config-'));
    super(config, context);
    this.configDir = process.env.CLAUDE_CONFIG_DIR;
    this.previous = previous;
    this.global.__claudeAgentSdk = require('@anthropic-ai/claude-agent-sdk');
  }

  async teardown() {
    if (this.previous === undefined) delete process.env.CLAUDE_CONFIG_DIR;
    else process.env.CLAUDE_CONFIG_DIR = this.previous;
    rmSync(this.configDir, { recursive: true, force: true });
    await super.teardown();
  }
};
