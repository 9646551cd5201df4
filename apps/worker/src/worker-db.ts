/** The outbox sweeper's pool: role session_store_sweeper (the outbox of every tenant, nothing else). */
export const SWEEPER_DB = Symbol('SWEEPER_DB');
