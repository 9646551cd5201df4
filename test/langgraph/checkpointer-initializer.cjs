// The CheckpointerTestInitializer the validation suite runs with (validation.test.mjs).
// CommonJS over the built package (npm run build), so Node loads it with no path
// mapping; test/langgraph-checkpointer.e2e-spec.ts sets the env below.
const { randomUUID } = require('node:crypto');
const { SessionStoreClient } = require('../../dist/packages/client/src');
const { SessionStoreSaver } = require('../../dist/packages/langgraph/src');

const client = new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL, apiKey: process.env.SESSION_STORE_KEY });

module.exports = {
  checkpointerName: '@session-store/langgraph',
  // Each checkpointer sees only its own threads (the suite requires it): its sessions get their own id prefix.
  createCheckpointer: () => new SessionStoreSaver({ client, sessionIdPrefix: `v${randomUUID().slice(0, 8)}:` }),
};
