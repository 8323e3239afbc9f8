export { PipelinesModule, type PipelinesOptions } from './pipelines.module.js';
export { splitPassages, TEXT_PIPELINE, type Passage } from './text/passages.js';
export { BUILTIN_MODEL, openModel, type ModelInfo } from './models/registry.js';
export { PRIORITIES, type Priority } from './jobs/queue.js';
export { startWorker, type WorkerOptions } from './workers/worker.js';
export { mentionsIn } from './structure/mentions.js';
export { signatureIn } from './structure/signature.js';
export { STRUCTURE_PIPELINE } from './structure/structure-task.js';
export { FakeChatServer, type FakeChatAnswer, type FakeChatRequest } from './understanding/testing/fake-chat.js';
