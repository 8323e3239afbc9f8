export { InsightsModule } from './insights.module.js';
export { benchCorpus, benchDetection, type DetectionBenchResult, type EngineNote } from './engine/index.js';
export { toMarkdown } from './notes/markdown.js';
