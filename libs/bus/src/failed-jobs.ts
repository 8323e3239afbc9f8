import { isNotFound, type Bus } from './bus.js';
import { JOB_SUBJECT_ROOT, JOBS_STREAM } from './subjects.js';

/**
 * Jobs a worker gave up on after its retries: `memex.job.failed.<lane>.<task>` on MEMEX_JOBS.
 * No consumer's filter takes them, so the work queue keeps them (with why they failed) until the
 * owner runs them again (`memex jobs retry`) — a job that keeps failing is set aside, never lost.
 */
export const FAILED_JOB_SUBJECT_ROOT = `${JOB_SUBJECT_ROOT}.failed`;

export function failedJobSubject(lane: string, task: string): string {
  return `${FAILED_JOB_SUBJECT_ROOT}.${lane}.${task}`;
}

export function isFailedJobSubject(subject: string): boolean {
  return subject.startsWith(`${FAILED_JOB_SUBJECT_ROOT}.`);
}

/** Failed jobs per task, from the stream's subject counts: one request, from any process. */
export async function failedJobCounts(bus: Bus): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let subjects: Record<string, number> | undefined;
  try {
    ({ subjects } = (
      await bus.jsm.streams.info(JOBS_STREAM, { subjects_filter: `${FAILED_JOB_SUBJECT_ROOT}.>` })
    ).state);
  } catch (error) {
    if (isNotFound(error)) return counts; // no pipelines have run yet
    throw error;
  }
  for (const [subject, n] of Object.entries(subjects ?? {})) {
    const task = subject.slice(subject.lastIndexOf('.') + 1);
    counts.set(task, (counts.get(task) ?? 0) + n);
  }
  return counts;
}
