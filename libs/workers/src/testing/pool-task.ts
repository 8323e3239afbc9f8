/** The test pool's worker: doubles, sleeps, exhausts its heap or exits, as the task says. */
export default async function run(task: { kind: string; value?: number }): Promise<number> {
  if (task.kind === 'sleep') await new Promise((resolve) => setTimeout(resolve, 60_000));
  if (task.kind === 'exit') process.exit(3);
  if (task.kind === 'grow') {
    const held: number[][] = [];
    for (;;) held.push(Array.from({ length: 1e5 }, (_, i) => i));
  }
  return (task.value ?? 0) * 2;
}
