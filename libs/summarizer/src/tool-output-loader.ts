import { Database } from '@app/database';
import { ID_PATTERN, Message, ToolOutputDigest, ToolOutputs, ToolOutputScanner } from '@app/domain';
import { findRef, readChunksFrom } from '@app/tool-output-store';

/** Total bytes one compaction reads from the tool-output store; results past it are read from their in-context view. */
export const TOOL_OUTPUT_READ_MAX_BYTES = 64 * 1024 * 1024;
/** Chunks per read: each batch is its own short tenant transaction, so a big output holds no connection for long. */
const CHUNKS_PER_READ = 32;

/**
 * The whole outputs of the truncated tool results among `messages` (a
 * plan's head and kept messages), digested as they stream out of the store
 * chunk by chunk (ToolOutputScanner), so no output is ever held whole. Keyed
 * by ref id, as SummaryChain reads them. Newest results first, within
 * `maxBytes` in all: an output that does not fit what is left is skipped (its
 * view stands in). A result shown whole needs no read; a ref of another
 * session, or one gone meanwhile, is skipped. Queries run as the tenant (RLS).
 */
export async function loadToolOutputs(
  db: Database,
  tenantId: string,
  sessionId: string,
  messages: readonly Message[],
  maxBytes = TOOL_OUTPUT_READ_MAX_BYTES,
): Promise<ToolOutputs> {
  const refIds = new Set<string>();
  for (const message of [...messages].reverse()) {
    for (const part of message.parts) {
      if (part.type === 'tool_result' && part.truncated && part.outputRef && ID_PATTERN.test(part.outputRef.id)) refIds.add(part.outputRef.id);
    }
  }
  const outputs = new Map<string, ToolOutputDigest>();
  if (refIds.size === 0) return outputs;
  const refs = await db.tenantTx(tenantId, async (tx) => {
    const found = [];
    for (const refId of refIds) {
      const ref = await findRef(tx, refId, sessionId);
      // An inline output shows truncated only where a later config shrank the view; its view stands in, as for an output too big to read.
      if (ref && ref.contentId !== null) found.push(ref);
    }
    return found;
  });
  let left = maxBytes;
  for (const ref of refs) {
    if (ref.byteSize > left) continue;
    left -= ref.byteSize;
    const scanner = new ToolOutputScanner();
    // Chunks split at byte offsets: the decoder carries a character cut between two of them.
    const decoder = new TextDecoder('utf-8');
    for (let from = 0; ; ) {
      const chunks = await db.tenantTx(tenantId, (tx) => readChunksFrom(tx, ref.contentId, from, CHUNKS_PER_READ));
      for (const chunk of chunks) scanner.push(decoder.decode(chunk.data, { stream: true }));
      if (chunks.length < CHUNKS_PER_READ) break;
      const last = chunks[chunks.length - 1];
      from = last.byteOffset + last.byteLength;
    }
    scanner.push(decoder.decode());
    outputs.set(ref.refId, scanner.end());
  }
  return outputs;
}
