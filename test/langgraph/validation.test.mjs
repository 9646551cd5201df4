// The official suite as the package exports it (`validate`, the specTest its
// CLI runs), in vitest with globals as its CLI runs it. The CLI itself cannot
// be used: 1.1.1's runner imports `checkpointerTestInitializerSchema` from a
// module that does not export it, so it refuses every initializer.
import { createRequire } from 'node:module';
import { validate } from '@langchain/langgraph-checkpoint-validation';

validate(createRequire(import.meta.url)('./checkpointer-initializer.cjs'));
