import { Tx } from '@app/database';
import { deleteSession, handOverToForks } from '@app/event-store';
import { deleteUnreferencedContents, lockSessionOutputs } from '@app/tool-output-store';

/**
 * The one hard delete of a session, for the API's DELETE and the retention
 * job alike. The session row is locked first, so no ref is added meanwhile;
 * the forks that read its rows get their copy (and the refs they show), then
 * its refs go with it (cascade), then the contents no other session of the
 * tenant points at (one another transaction holds is left to the tool-output
 * collector). Returns false when the session does not exist.
 */
export async function deleteSessionWithOutputs(tx: Tx, sessionId: string): Promise<boolean> {
  const contents = await lockSessionOutputs(tx, sessionId);
  if (!contents) return false;
  await handOverToForks(tx, sessionId);
  if (!(await deleteSession(tx, sessionId))) return false;
  await deleteUnreferencedContents(tx, contents);
  return true;
}
