import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MemexError } from '@memex/contracts';
import { resolveEngineConfig, type EngineConfig, type EngineConfigInput } from '../domain/engine/index.js';

export const CONFIG_FILE = 'insights.json';
export const CONFIG_ENV = 'MEMEX_INSIGHTS_CONFIG';

export interface LoadedEngineConfig {
  config: EngineConfig;
  /** sha256 of the resolved configuration: a change re-runs detection. */
  hash: string;
}

function parse(text: string, where: string): EngineConfigInput {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    return value as EngineConfigInput;
  } catch (error) {
    throw new MemexError('internal', `insights configuration in ${where}: ${(error as Error).message}`);
  }
}

function overlay(base: EngineConfigInput, top: EngineConfigInput): EngineConfigInput {
  const merged: Record<string, unknown> = { ...base };
  for (const [section, values] of Object.entries(top)) {
    merged[section] = { ...(base as Record<string, object>)[section], ...values };
  }
  return merged as EngineConfigInput;
}

/**
 * The detectors' parameters: the engine's defaults (the seed's values), overlaid by
 * `$MEMEX_HOME/insights.json`, overlaid by the JSON in MEMEX_INSIGHTS_CONFIG, section by section
 * (`{"knn": {"k": 10}, "hiddenArc": {"minSpanDays": 180}, "tagBurst": {"minDormantDays": 90}}`).
 * Read on every detection check, so an edit applies without a restart (and re-runs detection).
 */
export function loadEngineConfig(home: string, env: NodeJS.ProcessEnv = process.env): LoadedEngineConfig {
  const file = path.join(home, CONFIG_FILE);
  let input: EngineConfigInput = {};
  if (fs.existsSync(file)) input = parse(fs.readFileSync(file, 'utf8'), file);
  if (env[CONFIG_ENV]) input = overlay(input, parse(env[CONFIG_ENV], CONFIG_ENV));
  let config: EngineConfig;
  try {
    config = resolveEngineConfig(input);
  } catch (error) {
    throw new MemexError('internal', `insights configuration (${file}, ${CONFIG_ENV}): ${(error as Error).message}`);
  }
  return { config, hash: createHash('sha256').update(JSON.stringify(config)).digest('hex') };
}
