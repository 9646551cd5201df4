import { Foundation1763700000000 } from './1763700000000-foundation';
import { ModelView1763800000000 } from './1763800000000-model-view';

/** Every migration, in order. Hand-written SQL; the schema is never synchronized from entities. */
export const MIGRATIONS = [Foundation1763700000000, ModelView1763800000000];
