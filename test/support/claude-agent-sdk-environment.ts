import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import * as claudeAgentSdk from '@anthropic-ai/claude-agent-sdk';
import { TestEnvironment } from 'jest-environment-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Jest's module loader cannot require an ES module without
 * --experimental-vm-modules; Node's own require can (22.12+). A test
 * environment is loaded by Node itself, so it requires the ESM-only Claude
 * Agent SDK and hands the module to the spec, where
 * `@anthropic-ai/claude-agent-sdk` resolves to claude-agent-sdk.js (see
 * jest.config.js). The SDK reads CLAUDE_CONFIG_DIR from the real
 * process.env, which the spec's only copies: a fresh one is set here,
 * before the copy is taken, so local transcripts stay in it.
 */
export default class ClaudeAgentSdkEnvironment extends TestEnvironment {
  private readonly configDir: string;
  private readonly previous: string | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    const previous = process.env.CLAUDE_CONFIG_DIR;
    const configDir = mkdtempSync(join(tmpdir(), 'claude-config-'));
    process.env.CLAUDE_CONFIG_DIR = configDir;
    super(config, context);
    this.configDir = configDir;
    this.previous = previous;
    this.global.__claudeAgentSdk = claudeAgentSdk;
  }

  override async teardown(): Promise<void> {
    if (this.previous === undefined) delete process.env.CLAUDE_CONFIG_DIR;
    else process.env.CLAUDE_CONFIG_DIR = this.previous;
    rmSync(this.configDir, { recursive: true, force: true });
    await super.teardown();
  }
}
