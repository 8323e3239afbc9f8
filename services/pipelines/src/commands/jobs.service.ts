import { Injectable } from '@nestjs/common';
import { JobsFailed, JobsRetry, JobsStatus, type ParamsOf, type ResultOf } from '@memex/contracts';
import { RpcMethod } from '@memex/runtime';
import { describeJob, JobQueue, type FailedJob } from '../jobs/queue.js';
import { WorkerPool } from '../workers/pool.js';
import { UnderstandingRunner } from '../domain/understanding/runner.js';

/** `memex jobs`: the backlog, the jobs set aside after their retries, and running those again. */
@Injectable()
export class JobsService {
  constructor(
    private readonly queue: JobQueue,
    private readonly pool: WorkerPool,
    private readonly understanding: UnderstandingRunner,
  ) {}

  @RpcMethod(JobsStatus)
  async status(): Promise<ResultOf<typeof JobsStatus>> {
    const [queues, failed, tier2] = await Promise.all([
      this.queue.backlog(),
      this.queue.failed(0),
      this.understanding.status(),
    ]);
    return { queues, workers: this.pool.workers, failed: failed.total, tier2 };
  }

  @RpcMethod(JobsFailed)
  async failed(params: ParamsOf<typeof JobsFailed>): Promise<ResultOf<typeof JobsFailed>> {
    const { total, jobs } = await this.queue.failed(params.limit ?? 100);
    return { total, jobs: jobs.map(summary) };
  }

  @RpcMethod(JobsRetry)
  async retry(params: ParamsOf<typeof JobsRetry>): Promise<ResultOf<typeof JobsRetry>> {
    return this.queue.retryFailed(params.seqs);
  }

  /**
   * Set-aside jobs leave items without passages, vectors or tier-0 facts: the service is degraded
   * (so /healthz and `memex status` say so) until they are retried.
   */
  async healthProblems(): Promise<string[]> {
    const { total, jobs } = await this.queue.failed(1);
    const [oldest] = jobs;
    if (total === 0 || !oldest) return [];
    return [
      `${total} pipeline job(s) failed every retry and were set aside (first: ${describeJob(oldest.job)}: ${oldest.reason}); \`memex jobs failed\` lists them, \`memex jobs retry\` runs them again`,
    ];
  }
}

function summary(failed: FailedJob & { seq: number }): ResultOf<typeof JobsFailed>['jobs'][number] {
  const { seq, job, priority, attempts, reason, failed_at, worker } = failed;
  return {
    seq,
    task: job.task,
    item_id: 'item_id' in job ? job.item_id : null,
    priority,
    attempts,
    reason,
    failed_at,
    worker,
  };
}
