// The official suite as the package exports it (`validate`, the specTest its
// CLI runs), in vitest with globals as its CLI runs it. The CLI itself cannot
// be used: 1.1.1's runner imports `checkpointerTestInitializerSchema` from a
// module that does not export it, so it refuses every initializer.
// The saver is the built one (npm run build); test/langgraph-checkpointer.e2e-spec.ts sets the env.
import { randomUUID } from 'node:crypto';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { SessionStoreClient } from '../../dist/packages/client/src/index.js';
import { SessionStoreSaver } from '../../dist/packages/langgraph/src/index.js';

const client = new SessionStoreClient({ baseUrl: process.env.SESSION_STORE_URL, apiKey: process.env.SESSION_STORE_KEY });

validate({
  checkpointerName: '@session-store/langgraph',
  // Each checkpointer sees only its own threads (the suite requires it): its sessions get their own id prefix.
  createCheckpointer: () => new SessionStoreSaver({ client, sessionIdPrefix: `v${randomUUID().slice(0, 8)}:` }),
});
