/** A token bucket: at most `perSecond` quota units a second on average, bursts up to one second's worth. */
export class RequestBudget {
  private tokens: number;
  private last = Date.now();

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond;
  }

  async take(units = 1): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond);
      this.last = now;
      if (this.tokens >= units) {
        this.tokens -= units;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(((units - this.tokens) / this.perSecond) * 1000)));
    }
  }
}
