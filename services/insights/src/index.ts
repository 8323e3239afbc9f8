export { InsightsModule } from './insights.module.js';
export { benchDetection, type DetectionBenchResult } from './engine/index.js';
