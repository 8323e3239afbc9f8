/** A tiny BERT-style model folder (WordPiece tokenizer.json + ONNX graph) written by tests. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodeOnnxModel, type OnnxGraph } from './onnx-writer.js';

export const VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'hello',
  'world',
  'the',
  'car',
  'broke',
  'down',
  'play',
  '##ing',
  'quick',
  'fox',
];
export const tokenId = (token: string) => VOCAB.indexOf(token);

/** A BERT-style WordPiece tokenizer.json over VOCAB, as `tokenizers` would save it. */
export function tokenizerJson() {
  const special = (content: string) => ({
    id: tokenId(content),
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const cls = { SpecialToken: { id: '[CLS]', type_id: 0 } };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [cls, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        cls,
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [tokenId('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [tokenId('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])),
    },
  };
}

/** Writes `dir/model.onnx` (a graph, or raw bytes), `dir/tokenizer.json`, and extra JSON files by relative path. */
export async function writeOnnxModelDir(
  dir: string,
  model: OnnxGraph | Uint8Array,
  extraJson: Record<string, unknown> = {},
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'model.onnx'), model instanceof Uint8Array ? model : encodeOnnxModel(model));
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson()));
  for (const [file, json] of Object.entries(extraJson)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), JSON.stringify(json));
  }
  return dir;
}
