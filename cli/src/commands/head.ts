import fs from 'node:fs';
import type { Command } from 'commander';
import type { Static } from '@sinclair/typebox';
import {
  HeadEnroll,
  HeadMemoriesImport,
  HeadStatus,
  HeadUnenroll,
  TriggersList,
  TriggersRemove,
  type HeadMemory,
} from '@memex/contracts';
import { client, output } from '../context.js';

/** Rows per memex.head.memories.import call (its limit). */
const MEMORIES_PER_CALL = 1000;

/** The head's memories table as exported: a JSON array (or {"memories": [...]}), or JSON Lines. */
function readMemories(file: string): Static<typeof HeadMemory>[] {
  const text = fs.readFileSync(file, 'utf8').trim();
  if (text.startsWith('[') || text.startsWith('{"memories"')) {
    const parsed = JSON.parse(text) as unknown;
    const rows = Array.isArray(parsed) ? parsed : (parsed as { memories?: unknown }).memories;
    if (!Array.isArray(rows)) throw new Error(`${file}: expected an array of memories`);
    return rows as Static<typeof HeadMemory>[];
  }
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line, i) => {
      try {
        return JSON.parse(line) as Static<typeof HeadMemory>;
      } catch (error) {
        throw new Error(`${file} line ${i + 1}: not JSON (${(error as Error).message})`, { cause: error });
      }
    });
}

export function registerHead(program: Command): void {
  const head = program.command('head').description('the link to the agent host (the head): enrollment and status');
  head
    .command('enroll <url> <token>')
    .description('enroll with a head using its one-time token; the memex then dials it and keeps the link open')
    .option(
      '--ca-sha256 <hex>',
      'pin the head’s CA certificate (SHA-256 of its DER) instead of trusting it on first use',
    )
    .action(async (url: string, token: string, options: { caSha256?: string }) => {
      const enrolled = await client().call(HeadEnroll, {
        url,
        token,
        ...(options.caSha256 ? { ca_sha256: options.caSha256.toLowerCase().replace(/:/g, '') } : {}),
      });
      console.log(`enrolled as ${enrolled.subject}, certificate valid until ${enrolled.not_after}`);
      console.log(`head CA sha256 ${enrolled.ca_sha256}; dialling ${enrolled.link_url}`);
    });
  head
    .command('status')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const status = await client().call(HeadStatus, {});
      output(Boolean(options.json), status, () =>
        !status.enrolled
          ? 'not enrolled with a head (memex head enroll URL TOKEN)'
          : [
              `head      ${status.url}`,
              `identity  ${status.subject} (valid until ${status.not_after})`,
              `link      ${status.state}${status.connected_since ? ` since ${status.connected_since}` : ''}`,
              `calls     ${status.calls_relayed} relayed, ${status.reconnects} reconnects`,
              ...(status.last_error ? [`last error  ${status.last_error}`] : []),
            ].join('\n'),
      );
    });
  head
    .command('unenroll')
    .description('close the link and erase the certificate and key')
    .action(async () => {
      await client().call(HeadUnenroll, {});
      console.log('unenrolled: the head link is closed and its certificate erased');
    });

  head
    .command('import-memories <file>')
    .description(
      'import the head’s memories table (its JSON or JSON Lines export: about, text, forgotten, session, labels) as notes on their things',
    )
    .action(async (file: string) => {
      const rows = readMemories(file);
      let remembered = 0;
      let forgotten = 0;
      for (let start = 0; start < rows.length; start += MEMORIES_PER_CALL) {
        const result = await client().call(HeadMemoriesImport, {
          memories: rows.slice(start, start + MEMORIES_PER_CALL),
        });
        remembered += result.remembered.length;
        forgotten += result.forgotten;
        for (const { index, reason } of result.rejected)
          console.log(`row ${start + index + 1} not imported: ${reason}`);
      }
      console.log(`${remembered} memories kept as notes, ${forgotten} forgotten ones deleted, of ${rows.length} rows`);
    });

  const triggers = program.command('triggers').description('event triggers the head registered');
  triggers
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { triggers: list } = await client().call(TriggersList, {});
      output(Boolean(options.json), list, () =>
        list.length === 0
          ? 'no triggers'
          : list
              .map(
                (t) =>
                  `${t.id}  ${t.on}  ${t.name}  → ${'workflow' in t.action ? `workflow ${t.action.workflow}` : `notify ${t.action.notify}`}  fired ${t.fired}×  [${(t.scope_labels ?? ['owner']).join(', ')}]`,
              )
              .join('\n'),
      );
    });
  triggers.command('remove <id>').action(async (id: string) => {
    await client().call(TriggersRemove, { id });
    console.log(`removed trigger ${id}`);
  });
}
