import fs from 'node:fs';

/** Resident memory of a process in bytes (Linux /proc), 0 once it is gone. */
function rssOf(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Samples the summed resident memory of some processes every `everyMs` until stopped; `stop`
 * gives the peak of the sum and each one's own peak.
 */
export function samplePeakRss(
  processes: Record<string, number>,
  everyMs = 250,
): { stop(): { total: number; each: Record<string, number> } } {
  const each: Record<string, number> = Object.fromEntries(Object.keys(processes).map((name) => [name, 0]));
  let total = 0;
  const sample = () => {
    let sum = 0;
    for (const [name, pid] of Object.entries(processes)) {
      const rss = rssOf(pid);
      each[name] = Math.max(each[name]!, rss);
      sum += rss;
    }
    total = Math.max(total, sum);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { total, each };
    },
  };
}
