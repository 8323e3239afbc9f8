/** Loading a Hugging Face `tokenizer.json` with the pure-JS @huggingface/tokenizers. */
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { asRecord, ModelLoadError, readJson, readJsonIfExists } from './files.js';

/**
 * The part of @huggingface/tokenizers' Tokenizer we use. Declared here because the package's
 * .d.ts files use extension-less imports that NodeNext resolution cannot follow (they come out `any`).
 */
export interface HfTokenizer {
  encode(
    text: string,
    options: { add_special_tokens: boolean; return_token_type_ids?: boolean },
  ): { ids: number[]; attention_mask: number[]; token_type_ids?: number[] };
  token_to_id(token: string): number | undefined;
  get_vocab(withAddedTokens: boolean): Map<string, number>;
  get_added_tokens_decoder(): Map<number, { special: boolean }>;
  model: { unk_token_id?: number } | null;
}

export interface LoadedTokenizer {
  tokenizer: HfTokenizer;
  /** Id the model emits for unknown text, if it has one. */
  unkId: number | undefined;
  /** Ids of the special tokens (CLS, SEP, PAD, ...), which a post-processor may add. */
  specialIds: ReadonlySet<number>;
  /** Id used to pad a batch: tokenizer.json's padding.pad_id, else [PAD]/<pad>, else 0. */
  padId: number;
  /** Median length in characters of the vocabulary's tokens, to cut huge texts before tokenizing. */
  medianTokenChars: number;
}

/** Loads `dir/tokenizer.json` (+ optional `tokenizer_config.json`), naming the file on failure. */
export async function loadTokenizer(dir: string): Promise<LoadedTokenizer> {
  const file = path.join(dir, 'tokenizer.json');
  const json = asRecord(await readJson(file));
  const config = asRecord(await readJsonIfExists(path.join(dir, 'tokenizer_config.json')));
  let tokenizer: HfTokenizer;
  try {
    tokenizer = new Tokenizer(json, config) as HfTokenizer;
  } catch (err) {
    throw new ModelLoadError(`${file} is not a usable tokenizer: ${(err as Error).message}`, file);
  }
  const specialIds = new Set<number>();
  for (const [id, token] of tokenizer.get_added_tokens_decoder()) if (token.special) specialIds.add(id);
  const padToken = asRecord(json.padding).pad_id;
  const padId =
    typeof padToken === 'number' ? padToken : (tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0);
  const lengths = [...tokenizer.get_vocab(false).keys()].map((t) => t.length).sort((a, b) => a - b);
  return {
    tokenizer,
    unkId: tokenizer.model?.unk_token_id,
    specialIds,
    padId,
    medianTokenChars: Math.max(1, lengths[lengths.length >> 1] ?? 1),
  };
}

/**
 * Cuts a text to at most `maxTokens × medianTokenChars` characters before tokenizing: a
 * 1 MB document only needs its first few thousand characters when the model reads 512
 * tokens, and tokenizing all of it would dominate the cost.
 */
export function preTruncate(text: string, maxTokens: number, medianTokenChars: number): string {
  const maxChars = maxTokens * medianTokenChars * 2;
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}
