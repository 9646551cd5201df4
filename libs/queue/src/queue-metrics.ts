import { Gauge, Registry } from 'prom-client';
import { JobDispatcher } from './job-dispatcher';
import { QueueName } from './queue-names';

/** Jobs per queue and state, read from BullMQ at each scrape (absent while Redis is unreachable); API and worker export the same series. */
export function registerQueueDepth(registry: Registry, dispatcher: JobDispatcher): void {
  new Gauge({
    name: 'session_store_queue_jobs',
    help: 'BullMQ jobs per queue and state (absent while Redis is unreachable)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!dispatcher.connected) return;
      for (const name of Object.values(QueueName)) {
        const counts = await dispatcher.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        for (const [state, count] of Object.entries(counts)) this.set({ queue: name, state }, count);
      }
    },
  });
}
