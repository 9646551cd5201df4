/**
 * Concurrent loads of one key share a single promise: when a cached entry
 * expires under load, one query refills it instead of one per request (for
 * a row every request updates, such as an API key's last use, those would
 * also queue on its row lock).
 */
export class SingleFlight<V> {
  private readonly pending = new Map<string, Promise<V>>();

  run(key: string, load: () => Promise<V>): Promise<V> {
    let running = this.pending.get(key);
    if (!running) {
      running = load().finally(() => this.pending.delete(key));
      this.pending.set(key, running);
    }
    return running;
  }
}
