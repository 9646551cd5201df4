import { Database, Tx } from './database';
import { DatabaseUnavailableError } from './unavailable';

/**
 * Where context and event reads run: the read replica when one is configured
 * (APP_READ_DATABASE_URL), else the primary. A replica lags, so a read says
 * what makes its answer fresh enough (`fresh`): a session the replica does
 * not hold yet, or a head below the `minSeq` the client asked for, is read
 * again from the primary (read-your-writes). A replica that is down sends its
 * reads to the primary too; the primary's own failures surface as usual.
 */
export class ReadDatabase {
  constructor(
    private readonly primary: Database,
    private readonly replica: Database | null,
  ) {}

  async tenantRead<T>(tenantId: string, work: (tx: Tx) => Promise<T>, fresh: (result: T) => boolean): Promise<T> {
    if (this.replica) {
      try {
        const result = await this.replica.tenantRead(tenantId, work);
        if (fresh(result)) return result;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError)) throw error;
      }
    }
    return this.primary.tenantRead(tenantId, work);
  }

  async close(): Promise<void> {
    await this.replica?.close();
  }
}
