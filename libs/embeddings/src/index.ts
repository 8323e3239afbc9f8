/**
 * @memex/embeddings: local text embeddings behind one provider interface.
 * Built-in GloVe-SIF (offline default), Model2Vec folders, ONNX sentence-transformers
 * folders, and OpenAI-compatible / Ollama HTTP endpoints.
 */
export {
  chunks,
  dot,
  isZeroVector,
  l2normalize,
  type EmbeddingProvider,
  type ProviderDescription,
  type ProviderKind,
} from './provider.js';
export { ModelLoadError } from './files.js';
export { onnxProviders, withOnnxProvider, type OnnxProvider } from './onnx-session.js';
export {
  BUILTIN_GLOVE_WORDS,
  builtinGloveTablePath,
  builtinTableDir,
  GLOVE_SIF_DIMS,
  GLOVE_SIF_SPACE,
  GloveSifProvider,
  gloveTokens,
  lookupWord,
  type GloveSifOptions,
} from './glove.js';
export { encodeGloveTable, parseGloveTable, type FloatTable, type GloveTable } from './glove-table.js';
export { ENGLISH_STOP_WORDS } from './stopwords.js';
export { MODEL2VEC_FILES, Model2VecProvider, type Model2VecOptions } from './model2vec.js';
export { ONNX_FILES, OnnxSentenceProvider, type OnnxSentenceOptions, type Pooling } from './onnx.js';
export { HttpEmbeddingError, HttpEmbeddingProvider, type HttpEmbeddingOptions, type HttpProtocol } from './http.js';
export {
  parseSafetensors,
  SafetensorsError,
  toFloat32,
  toInt32,
  type SafeTensor,
  type SafetensorsDtype,
} from './safetensors.js';
export {
  BUILTIN_SPEC,
  defaultProvider,
  detectProviderKind,
  loadProvider,
  type LoadProviderOptions,
} from './registry.js';
export { benchEmbed } from './bench.js';
