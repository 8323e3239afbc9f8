export * from "./provider.js";
export * from "./files.js";
export * from "./safetensors.js";
export * from "./stopwords.js";
export * from "./glove.js";
export * from "./tokenizer.js";
export * from "./model2vec.js";
export * from "./onnx.js";
