// What `@anthropic-ai/claude-agent-sdk` resolves to under Jest (jest.config.js): the module its environment required.
if (!globalThis.__claudeAgentSdk) throw new Error('A spec importing @anthropic-ai/claude-agent-sdk needs `@jest-environment ./test/support/claude-agent-sdk-environment.ts`');
module.exports = globalThis.__claudeAgentSdk;
