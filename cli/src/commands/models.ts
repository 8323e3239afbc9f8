import path from 'node:path';
import type { Command } from 'commander';
import { ModelsAdd, ModelsList, ModelsUse } from '@memex/contracts';
import { client, output } from '../context.js';

export function registerModels(program: Command): void {
  const models = program.command('models').description('embedding models: each model and version is a search space');
  models
    .command('add <pathOrUrl>')
    .description(
      'register a Model2Vec or ONNX model folder, or an OpenAI-compatible/Ollama URL; it fills in the background, then search switches to it',
    )
    .option('--name <name>', 'a name for the space id (default: the folder name)')
    .option('--model <model>', 'the model name, for a URL')
    .option('--protocol <protocol>', 'openai | ollama, for a URL', 'openai')
    .option('--task <list>', 'a chat model for tiers 2 and 3: summarize,extract (not an embedding model)')
    .option('--version <version>', "a chat model's version (NAME@VERSION; a new one for a new model or prompt)")
    .option('--kinds <list>', 'item kinds routed to the chat model (default: every kind)')
    .option('--requests-per-minute <n>', "the chat model's budget: requests a minute")
    .option('--tokens-per-day <n>', "the chat model's budget: tokens a UTC day")
    .option('--cost-per-day <amount>', "the chat model's budget: cost a UTC day")
    .option('--cost-per-1k-tokens <amount>', "the chat model's price, for cost budgets and estimates")
    .option('--json', 'print JSON')
    .action(async (spec: string, options: AddOptions) => {
      const isUrl = /^https?:\/\//i.test(spec);
      if (options.protocol !== 'openai' && options.protocol !== 'ollama')
        throw new Error(`--protocol must be openai or ollama, got "${options.protocol}"`);
      const added = await client().call(ModelsAdd, {
        // Workers read the same path, so it is sent absolute.
        path: isUrl || spec.startsWith('builtin:') ? spec : path.resolve(spec),
        ...(options.name ? { name: options.name } : {}),
        ...(isUrl && options.model ? { model: options.model, protocol: options.protocol } : {}),
        ...chatOptions(options),
      });
      output(Boolean(options.json), added, () =>
        added.kind === 'chat'
          ? `added chat model ${added.space}; new items' tasks go to it — see \`memex jobs\`, re-run old ones with \`memex rerun --tier 2 --model ${added.space}\``
          : `added ${added.space} (${added.kind}, ${added.dims} dims); every item is being embedded into it — see \`memex models list\``,
      );
    });
  models
    .command('list')
    .description('the spaces, which one search answers from, and how far each is filled')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const listed = await client().call(ModelsList, {});
      output(Boolean(options.json), listed, () =>
        listed.models
          .map(
            (m) =>
              `${m.state === 'active' ? '*' : ' '} ${m.space}  ${m.kind}, ${m.dims} dims  ${m.state}  ${m.embedded_items}/${m.total_items} items  ${m.source}`,
          )
          .join('\n'),
      );
    });
  models
    .command('use <space>')
    .description('choose the space search answers from (it takes over once complete)')
    .action(async (space: string) => {
      await client().call(ModelsUse, { space });
      console.log(`chose ${space}; search switches to it once every item has a vector there`);
    });
}

interface AddOptions {
  name?: string;
  model?: string;
  protocol: string;
  task?: string;
  version?: string;
  kinds?: string;
  requestsPerMinute?: string;
  tokensPerDay?: string;
  costPerDay?: string;
  costPer1kTokens?: string;
  json?: boolean;
}

function positive(flag: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)))
    throw new Error(`--${flag} must be a ${integer ? 'whole ' : ''}number ≥ 0, got "${value}"`);
  return n;
}

/** The chat-model half of `models add` (given --task). */
function chatOptions(options: AddOptions) {
  if (!options.task) return {};
  const tasks = options.task.split(',').map((t) => t.trim());
  const unknown = tasks.filter((t) => t !== 'summarize' && t !== 'extract');
  if (unknown.length > 0) throw new Error(`--task takes summarize and extract, got ${unknown.join(', ')}`);
  const budget = {
    requests_per_minute: positive('requests-per-minute', options.requestsPerMinute, true),
    tokens_per_day: positive('tokens-per-day', options.tokensPerDay, true),
    cost_per_day: positive('cost-per-day', options.costPerDay, false),
  };
  const price = positive('cost-per-1k-tokens', options.costPer1kTokens, false);
  return {
    tasks: tasks as Array<'summarize' | 'extract'>,
    ...(options.version ? { version: options.version } : {}),
    ...(options.kinds ? { kinds: options.kinds.split(',').map((k) => k.trim()) } : {}),
    budget: Object.fromEntries(Object.entries(budget).filter(([, v]) => v !== undefined)),
    ...(price !== undefined ? { cost_per_1k_tokens: price } : {}),
  };
}
