import type { Budget, Usage } from '@memex/contracts';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

interface Spend {
  /** The UTC day (ms at its start) `day` counts, and the minute `minuteRequests` counts. */
  day: number;
  dayUsage: Usage;
  minute: number;
  minuteRequests: number;
  /** From a 429: the endpoint asked us to wait until then (wall-clock time: it is the endpoint's clock, not the windows'). */
  heldUntil: number;
}

export interface Pause {
  until: Date;
  because: string;
}

/**
 * Each chat model's spend in its windows (requests this minute; tokens and cost this UTC day),
 * against its budget. A spent budget pauses the model's jobs (so the tier using it), not the
 * memex, until the window turns. Spend already on the log is counted in at start (`record` from
 * the log), so a restart does not grant a fresh day.
 */
export class Budgets {
  private readonly spends = new Map<string, Spend>();

  constructor(private readonly now: () => number = Date.now) {}

  private spend(model: string): Spend {
    const now = this.now();
    const day = now - (now % DAY_MS);
    const minute = now - (now % MINUTE_MS);
    let spend = this.spends.get(model);
    if (!spend) {
      spend = { day, dayUsage: zero(), minute, minuteRequests: 0, heldUntil: 0 };
      this.spends.set(model, spend);
    }
    if (spend.day !== day) Object.assign(spend, { day, dayUsage: zero() });
    if (spend.minute !== minute) Object.assign(spend, { minute, minuteRequests: 0 });
    return spend;
  }

  /** Why (and until when) the model may not be asked now; undefined when it may. */
  paused(model: string, budget: Budget): Pause | undefined {
    const spend = this.spend(model);
    if (spend.heldUntil > Date.now()) return { until: new Date(spend.heldUntil), because: 'the endpoint answered 429' };
    const nextDay = new Date(spend.day + DAY_MS);
    if (budget.tokens_per_day !== undefined && spend.dayUsage.tokens >= budget.tokens_per_day)
      return { until: nextDay, because: `tokens_per_day ${budget.tokens_per_day} spent` };
    if (budget.cost_per_day !== undefined && spend.dayUsage.cost >= budget.cost_per_day)
      return { until: nextDay, because: `cost_per_day ${budget.cost_per_day} spent` };
    if (budget.requests_per_minute !== undefined && spend.minuteRequests >= budget.requests_per_minute)
      return {
        until: new Date(spend.minute + MINUTE_MS),
        because: `requests_per_minute ${budget.requests_per_minute} used`,
      };
    return undefined;
  }

  /** Takes one request from this minute's allowance, or says why not. */
  startRequest(model: string, budget: Budget): Pause | undefined {
    const pause = this.paused(model, budget);
    if (!pause) this.spend(model).minuteRequests++;
    return pause;
  }

  /** Tokens and cost a request spent (its request was counted by `startRequest`). */
  charge(model: string, tokens: number, costPer1k: number): Usage {
    const usage = { requests: 1, tokens, cost: (tokens / 1000) * costPer1k };
    const day = this.spend(model).dayUsage;
    day.requests += 1;
    day.tokens += tokens;
    day.cost += usage.cost;
    return usage;
  }

  /** Spend read back from the log: counted when it falls in today's window. */
  record(model: string, usage: Usage, at: Date): void {
    const spend = this.spend(model);
    if (at.getTime() < spend.day) return;
    spend.dayUsage.requests += usage.requests;
    spend.dayUsage.tokens += usage.tokens;
    spend.dayUsage.cost += usage.cost;
  }

  hold(model: string, ms: number): void {
    const spend = this.spend(model);
    spend.heldUntil = Math.max(spend.heldUntil, Date.now() + ms);
  }

  today(model: string): Usage {
    return { ...this.spend(model).dayUsage };
  }
}

function zero(): Usage {
  return { requests: 0, tokens: 0, cost: 0 };
}
