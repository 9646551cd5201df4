import type { GrepResult } from '@app/domain/tool-output';

/** Messages between the main thread and a grep thread. */
export type GrepRequest =
  | { type: 'start'; pattern: string; ignoreCase: boolean; context: number; limit: number; maxScanBytes: number; deadline: number }
  | { type: 'piece'; bytes: Uint8Array }
  | { type: 'finish'; timedOut: boolean };

export type GrepReply =
  | { type: 'started' }
  | { type: 'more'; more: boolean }
  | { type: 'result'; result: GrepResult }
  | { type: 'error'; message: string };
