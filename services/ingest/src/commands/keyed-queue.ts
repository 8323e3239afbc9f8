/**
 * Runs tasks one after another per key, any number of keys at once: two items of the same
 * identity in this process (in one batch or in concurrent ones) are stored in turn, so the second
 * finds the first instead of racing it to the log. Across processes the identity claims decide.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const before = keys.map((key) => this.tails.get(key)).filter((tail): tail is Promise<void> => tail !== undefined);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const key of keys) this.tails.set(key, done);
    try {
      await Promise.all(before);
      return await task();
    } finally {
      release();
      for (const key of keys) if (this.tails.get(key) === done) this.tails.delete(key);
    }
  }
}

/** `fn` over `items` with at most `limit` running at once; results in order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
