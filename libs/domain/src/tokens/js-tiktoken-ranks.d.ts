// js-tiktoken declares its rank files only under package.json "exports", which
// TypeScript's node10 module resolution (this repo's) does not read.
declare module 'js-tiktoken/ranks/o200k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}

declare module 'js-tiktoken/ranks/cl100k_base' {
  import type { TiktokenBPE } from 'js-tiktoken/lite';
  const ranks: TiktokenBPE;
  export default ranks;
}
