import path from 'node:path';
import type { Command } from 'commander';
import {
  SourcesAdd,
  SourcesConfigure,
  SourcesGet,
  SourcesList,
  SourcesPause,
  SourcesRemove,
  SourcesRescan,
  SourcesResume,
  type ResultOf,
} from '@memex/contracts';
import { client, output } from '../context.js';

type Summary = ResultOf<typeof SourcesList>['sources'][number];
type Media = 'auto' | 'in-place' | 'copy';

const MEDIA_MODES = ['auto', 'in-place', 'copy'];

function media(value: string): Media {
  if (!MEDIA_MODES.includes(value)) throw new Error(`--media must be one of ${MEDIA_MODES.join(', ')}`);
  return value as Media;
}

function labels(value: string): string[] {
  return value
    .split(',')
    .map((label) => label.trim())
    .filter(Boolean);
}

function bytes(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(|k|m|g)b?$/i.exec(value.trim());
  if (!match) throw new Error(`--in-place-over takes a size such as 200MB, not ${JSON.stringify(value)}`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.round(Number(match[1]) * unit);
}

/** One line per source: its state, counts and what it waits for. */
function line(s: Summary): string {
  const state = s.state === 'error' ? `ERROR (${s.reason})` : s.state;
  if (s.worker) {
    const seen = s.worker.last_seen ? `last seen ${s.worker.last_seen}` : 'not heard since the memex started';
    const reachable = s.worker.reachable ? 'reachable' : 'unreachable';
    const counts = `${s.counts.items} items from ${s.counts.files} files, ${s.counts.failed} failed, pipelines backlog ${s.pipeline_backlog ?? 0} jobs (${s.worker.jobs_waiting ?? 0} on the worker)`;
    const own = [s.worker.extracts && 'extracts its text', s.worker.derives && 'makes its thumbnails'].filter(Boolean);
    // Its items are the worker's own source: search filters them with source:<name>.
    return `${s.id}  worker  ${s.worker.folders.join(', ') || '(folders not heard yet)'}  ${state}  ${counts}, ${reachable}, ${seen}${own.length ? `, ${own.join(', ')}` : ''}  (search: source:${s.name})`;
  }
  const counts =
    s.managed_by === 'sources'
      ? `${s.counts.items} items from ${s.counts.files} files (${s.counts.in_place} in place), ${s.counts.failed} failed, backlog ${s.backlog}, pipelines backlog ${s.pipeline_backlog ?? 0} jobs`
      : `${s.counts.items} items`;
  const scan = s.last_scan ? `, last scan ${s.last_scan.finished_at}` : '';
  const where = s.root ? ` ${s.root.replace(/^file:/, '')}` : '';
  return `${s.id}  ${s.kind}${where}  ${state}  ${counts}${scan}${s.managed_by === 'sources' ? '' : `  (${s.managed_by})`}`;
}

export function registerSources(program: Command): void {
  const sources = program
    .command('sources')
    .description(
      'where items come from on their own: watched folders, workers (memex worker), and the Google accounts (memex sources list)',
    )
    .action(async () => {
      const { sources: list } = await client().call(SourcesList, {});
      console.log(list.length === 0 ? 'no sources (memex sources add folder <path>)' : list.map(line).join('\n'));
    });
  sources
    .command('add <kind> <path>')
    .description(
      'watch a folder on the memex host: its files are scanned now, then every change is picked up (photos, videos and audio are read in place); takeout: an unpacked Google Takeout, photo-library: a photo export (Apple Photos with XMP, Google Photos), read again on each rescan (a newer export unpacked there adds what is new)',
    )
    .option('--id <id>', 'the source id (default: from the folder name); search filters with source:<id>')
    .option('--name <name>', 'a name to show')
    .option('--labels <labels>', 'scope labels every item gets, comma-separated (e.g. client:acme)', labels)
    .option('--media <mode>', 'auto (media in place, the rest copied), in-place (every file), copy (every file)', media)
    .option(
      '--in-place-over <size>',
      'with media auto: files at least this large are read in place too (e.g. 200MB)',
      bytes,
    )
    .option('--rescan <seconds>', 'the safety-net rescan interval (default 900)', Number)
    .action(
      async (
        kind: string,
        folder: string,
        options: {
          id?: string;
          name?: string;
          labels?: string[];
          media?: Media;
          inPlaceOver?: number;
          rescan?: number;
        },
      ) => {
        if (kind !== 'folder' && kind !== 'takeout' && kind !== 'photo-library')
          throw new Error(
            `unknown source kind ${JSON.stringify(kind)}: memex sources add folder|takeout|photo-library <path>`,
          );
        const added = await client().call(SourcesAdd, {
          kind,
          path: path.resolve(folder),
          ...(options.id ? { id: options.id } : {}),
          ...(options.name ? { name: options.name } : {}),
          ...(options.labels ? { labels: options.labels } : {}),
          ...(options.media ? { media: options.media } : {}),
          ...(options.inPlaceOver ? { in_place_over_bytes: options.inPlaceOver } : {}),
          ...(options.rescan ? { rescan_seconds: options.rescan } : {}),
        });
        console.log(
          `watching ${path.resolve(folder)} as source ${added.id}; memex sources shows how far its first scan is`,
        );
      },
    );
  sources
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { sources: list } = await client().call(SourcesList, {});
      output(Boolean(options.json), list, () =>
        list.length === 0 ? 'no sources (memex sources add folder <path>)' : list.map(line).join('\n'),
      );
    });
  sources
    .command('get <id>')
    .description('one source, with the files it could not read and why')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const got = await client().call(SourcesGet, { id });
      output(Boolean(options.json), got, () =>
        [
          line(got.source),
          ...(got.source.settings
            ? [
                `  labels: ${got.source.settings.labels.join(', ') || '(none)'}; media: ${got.source.settings.media}; rescan every ${got.source.settings.rescan_seconds} s`,
              ]
            : []),
          ...got.failures.map((f) => `  failed: ${f.path}: ${f.reason}`),
          // What the last whole scan saw and sent nowhere, so every file is accounted for.
          ...(got.source.last_scan?.passed_over ?? []).map(
            (p) =>
              `  passed over: ${p.count} ${p.count === 1 ? 'file' : 'files'}, ${p.reason} (${p.examples.join(', ')})`,
          ),
        ].join('\n'),
      );
    });
  sources
    .command('configure <id>')
    .description('change a source’s settings (for files read from now on)')
    .option('--name <name>')
    .option('--labels <labels>', 'comma-separated', labels)
    .option('--media <mode>', 'auto, in-place or copy', media)
    .option('--in-place-over <size>', 'e.g. 200MB', bytes)
    .option('--rescan <seconds>', 'the safety-net rescan interval', Number)
    .action(
      async (
        id: string,
        options: { name?: string; labels?: string[]; media?: Media; inPlaceOver?: number; rescan?: number },
      ) => {
        await client().call(SourcesConfigure, {
          id,
          ...(options.name ? { name: options.name } : {}),
          ...(options.labels ? { labels: options.labels } : {}),
          ...(options.media ? { media: options.media } : {}),
          ...(options.inPlaceOver ? { in_place_over_bytes: options.inPlaceOver } : {}),
          ...(options.rescan ? { rescan_seconds: options.rescan } : {}),
        });
        console.log(`configured ${id}`);
      },
    );
  sources
    .command('pause <id>')
    .description('ignore the source’s changes until it is resumed')
    .action(async (id: string) => {
      await client().call(SourcesPause, { id });
      console.log(`paused ${id}`);
    });
  sources
    .command('resume <id>')
    .description('pick up changes again, after a rescan that catches up')
    .action(async (id: string) => {
      await client().call(SourcesResume, { id });
      console.log(`resumed ${id}; it rescans now`);
    });
  sources
    .command('rescan <id>')
    .description(
      'compare the folder (or a worker’s folders: worker.<name>) with the memex now, the files that failed read again; waits for the scan',
    )
    .action(async (id: string) => {
      const r = await client().call(SourcesRescan, { id });
      console.log(
        `${id}: ${r.files} files; ${r.ingested} new, ${r.updated} updated, ${r.moved} moved, ${r.removed} removed, ${r.failed} failed`,
      );
    });
  sources
    .command('remove <id>')
    .description('stop watching; its items stay unless --delete-items')
    .option('--delete-items', 'delete its items too, with everything derived from them')
    .action(async (id: string, options: { deleteItems?: boolean }) => {
      const r = await client().call(SourcesRemove, { id, delete_items: Boolean(options.deleteItems) });
      console.log(`removed ${id}${options.deleteItems ? `; ${r.deleted_items} items deleted` : '; its items stay'}`);
    });
}
