import { Foundation1763700000000 } from './1763700000000-foundation';

/** Every migration, in order. Hand-written SQL; the schema is never synchronized from entities. */
export const MIGRATIONS = [Foundation1763700000000];
