/** Session export and import, pure part: the JSON Lines format, its line-by-line checks and the ref renaming. */
export * from './jsonl';
export * from './transfer-format';
