/** Resolves once `condition` holds, polling; fails naming `what` it waited for after `timeoutMs`. */
export async function waitUntil(
  condition: () => Promise<boolean>,
  what: string,
  { timeoutMs = 120_000, everyMs = 50 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
