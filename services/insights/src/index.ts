export { InsightsModule } from './insights.module.js';
export { benchCorpus, benchDetection, type DetectionBenchResult, type EngineNote } from './domain/engine/index.js';
export { toMarkdown } from './testing/markdown.js';
