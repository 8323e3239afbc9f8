import { timeKnown, type KindAndMeta } from '../domain/media-item.js';

/** `new`: taken shortly before it arrived (a phone's latest); `backfill`: an old library being imported. */
export type Priority = 'new' | 'backfill';

/** A photo taken within this long before it was logged is new (MEMEX_MEDIA_NEW_DAYS, default 7). */
export function newWithinMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const days = Number(env['MEMEX_MEDIA_NEW_DAYS'] ?? 7);
  return (Number.isFinite(days) && days >= 0 ? days : 7) * 86_400_000;
}

/** New when taken within `newWithinMs` of being logged; undated photos count as backfill. */
export function priorityOf(
  event: { recorded_at: string; occurred_at: string; data: KindAndMeta },
  newWithinMs: number,
): Priority {
  if (!timeKnown(event.data)) return 'backfill';
  return Date.parse(event.recorded_at) - Date.parse(event.occurred_at) <= newWithinMs ? 'new' : 'backfill';
}

/**
 * Backfill photos an operator lets through per minute (MEMEX_MEDIA_BACKFILL_PER_MINUTE; unset or
 * 0 for no limit), so importing an old library leaves the machine to its other work. New photos
 * never wait for it.
 */
export class WorkBudget {
  private readonly started: number[] = [];

  constructor(
    readonly perMinute: number | null,
    private readonly now: () => number = Date.now,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): WorkBudget {
    const n = Number(env['MEMEX_MEDIA_BACKFILL_PER_MINUTE'] ?? 0);
    return new WorkBudget(Number.isInteger(n) && n > 0 ? n : null);
  }

  /** How long the next piece of work would wait now (0 when it may start). */
  waitMs(): number {
    if (this.perMinute === null) return 0;
    const now = this.now();
    while (this.started.length > 0 && this.started[0]! <= now - 60_000) this.started.shift();
    return this.started.length < this.perMinute ? 0 : this.started[0]! + 60_000 - now;
  }

  /** One piece of work starts now. */
  count(): void {
    if (this.perMinute !== null) this.started.push(this.now());
  }
}

/**
 * The photos read off the queue and not yet taken by a worker: new ones first, each kind in the
 * order it arrived, backfill only as the budget allows. The reader waits for `room` before
 * reading ahead further.
 */
export class PriorityBuffer<T> {
  private readonly queues: Record<Priority, T[]> = { new: [], backfill: [] };
  private arrivals: Array<() => void> = [];
  private readonly roomWaiters: Array<() => void> = [];
  private closed = false;

  constructor(
    readonly capacity: number,
    private readonly budget: WorkBudget,
  ) {}

  get size(): number {
    return this.queues.new.length + this.queues.backfill.length;
  }

  /** Everything held, to keep their acknowledgement deadlines alive. */
  held(): T[] {
    return [...this.queues.new, ...this.queues.backfill];
  }

  push(item: T, priority: Priority): void {
    this.queues[priority].push(item);
    this.wake();
  }

  /** Resolves once there is room for another. */
  async room(): Promise<void> {
    while (this.size >= this.capacity && !this.closed) await new Promise<void>((r) => this.roomWaiters.push(r));
  }

  /** The next piece of work, waiting for one (or for the budget); null once closed. */
  async take(): Promise<T | null> {
    for (;;) {
      if (this.closed) return null;
      const fresh = this.queues.new.shift();
      if (fresh !== undefined) return this.taken(fresh);
      const wait = this.queues.backfill.length > 0 ? this.budget.waitMs() : Infinity;
      if (wait === 0) {
        this.budget.count();
        return this.taken(this.queues.backfill.shift()!);
      }
      // Woken by an arrival, a close, or the budget's time.
      await new Promise<void>((resolve) => {
        const timer = wait === Infinity ? undefined : setTimeout(resolve, wait);
        this.arrivals.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.closed = true;
    this.wake();
    for (const waiter of this.roomWaiters.splice(0)) waiter();
  }

  private taken(item: T): T {
    this.roomWaiters.shift()?.();
    return item;
  }

  private wake(): void {
    const waiting = this.arrivals;
    this.arrivals = [];
    for (const resolve of waiting) resolve();
  }
}
