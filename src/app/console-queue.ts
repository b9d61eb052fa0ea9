/**
 * The web console's QueueSource over the bridge's job queue (either driver, through the queue
 * port's jobCounts/listJobs/removeJob) and bridge.db's audit log: every action on the queue, or
 * its refusal, is an audit entry naming the person.
 */
import type { QueueSource } from '../bridges/web/queue-source.ts';
import type { Repositories } from '../db/repositories/index.ts';
import { InvalidInputError } from '../errors.ts';
import type { JobQueue } from '../jobs/queue/port.ts';

/** The console's queue page over `queue`, auditing into `repos.audit`. */
export function consoleQueue(queue: JobQueue, repos: Pick<Repositories, 'audit'>): QueueSource {
  const audit: QueueSource['audit'] = async (actor, action, jobId, outcome, detail) => {
    await repos.audit.record({ actor, action, target: jobId, outcome, detail: detail ?? null });
  };
  return {
    driver: queue.driver,
    counts: () => queue.jobCounts(),
    list: (state, limit) => queue.listJobs(state, limit),
    audit,
    async remove(actor, jobId) {
      const result = await queue.removeJob(jobId);
      if (result === 'removed') {
        await audit(actor, 'queue:remove', jobId, 'allowed');
        return `Removed job ${jobId}: it will not run.`;
      }
      const why =
        result === 'active'
          ? 'it is running (cancel its run instead)'
          : 'no job waits under that id';
      await audit(actor, 'queue:remove', jobId, 'refused', why);
      throw new InvalidInputError(`Job ${jobId} was not removed: ${why}.`);
    },
  };
}
