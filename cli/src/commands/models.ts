import path from 'node:path';
import type { Command } from 'commander';
import { JobsStatus, ModelsAdd, ModelsList, ModelsUse } from '@memex/contracts';
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
    .option('--json', 'print JSON')
    .action(async (spec: string, options: { name?: string; model?: string; protocol: string; json?: boolean }) => {
      const isUrl = /^https?:\/\//i.test(spec);
      if (options.protocol !== 'openai' && options.protocol !== 'ollama')
        throw new Error(`--protocol must be openai or ollama, got "${options.protocol}"`);
      const added = await client().call(ModelsAdd, {
        // Workers read the same path, so it is sent absolute.
        path: isUrl || spec.startsWith('builtin:') ? spec : path.resolve(spec),
        ...(options.name ? { name: options.name } : {}),
        ...(isUrl && options.model ? { model: options.model, protocol: options.protocol } : {}),
      });
      output(
        Boolean(options.json),
        added,
        () =>
          `added ${added.space} (${added.kind}, ${added.dims} dims); every item is being embedded into it — see \`memex models list\``,
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
  program
    .command('jobs')
    .description('the pipelines backlog by priority')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const status = await client().call(JobsStatus, {});
      output(Boolean(options.json), status, () =>
        [
          ...status.queues.map((q) => `${q.priority.padEnd(10)} ${q.waiting} waiting, ${q.in_progress} in progress`),
          `${status.workers} workers in the answering process`,
        ].join('\n'),
      );
    });
}
