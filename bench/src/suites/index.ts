import type { BenchResult } from '../result.js';

export type Suite = () => Promise<BenchResult[]>;

/** Every benchmark suite by name; `npm run bench -- <name>` runs one. */
export const suites: Record<string, () => Promise<Suite>> = {
  log: async () => (await import('./log.js')).run,
  rpc: async () => (await import('./rpc.js')).run,
  ingest: async () => (await import('./ingest.js')).run,
  replay: async () => (await import('./ingest.js')).runReplay,
  search: async () => (await import('./search.js')).run,
  graph: async () => (await import('./graph.js')).run,
  insights: async () => (await import('./insights.js')).run,
  web: async () => (await import('./web.js')).run,
  calendar: async () => (await import('./calendar.js')).run,
  'mail-sync': async () => (await import('./mail-sync.js')).run,
  media: async () => (await import('./media.js')).run,
  head: async () => (await import('./head.js')).run,
  understanding: async () => (await import('./understanding.js')).run,
  sources: async () => (await import('./sources.js')).run,
};
