import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '@memex/config';
import { client } from '../context.js';
import { formatSummary } from '../import/report.js';
import { runImport, type ImportKind } from '../import/run.js';

interface CommonOptions {
  source: string;
  labels: string;
  folder?: string;
  batch: number;
  batchMb: number;
  inFlight: number;
  retries: number;
  restart?: boolean;
  json?: boolean;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

function wholeOrZero(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
}

export async function importAction(
  kind: ImportKind,
  target: string,
  options: CommonOptions,
  parts: string[] = [],
): Promise<void> {
  const { summary, error } = await runImport({
    kind,
    target,
    parts,
    source: options.source,
    home: loadConfig().home,
    client: client(),
    labels: options.labels
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean),
    ...(options.folder ? { folder: options.folder } : {}),
    batchItems: options.batch,
    batchBytes: Math.round(options.batchMb * 1024 * 1024),
    inFlight: options.inFlight,
    retries: options.retries,
    restart: Boolean(options.restart),
    progress: process.stderr,
  });
  console.log(
    options.json
      ? JSON.stringify({ ...summary, ...(error ? { error: String((error as Error).message ?? error) } : {}) }, null, 2)
      : formatSummary(summary, error !== undefined),
  );
  if (error !== undefined) throw error;
}

export function withCommonOptions(command: Command): Command {
  return command
    .requiredOption(
      '--source <id>',
      'the source id: items come in as import:<kind>:<id> (also the mail account name), and its progress is kept under it',
    )
    .option('--labels <labels>', 'comma-separated scope labels for every item (which agent sessions may see them)', '')
    .option('--batch <n>', 'items per request', positive, 200)
    .option('--batch-mb <mb>', 'megabytes of item data per request at most', positive, 4)
    .option('--in-flight <n>', 'requests sent before the first is answered', positive, 3)
    .option('--retries <n>', 'times a request is sent again while the memex is unreachable', wholeOrZero, 5)
    .option(
      '--restart',
      'forget the progress of earlier runs on this source and send everything again (duplicates are harmless)',
    )
    .option('--json', 'print the summary as JSON');
}

export function registerImport(program: Command): void {
  const group = program
    .command('import')
    .description(
      'import an archive through memex.ingest: streamed, batched, resumable (run again to continue after an interruption)',
    );
  withCommonOptions(
    group
      .command('mbox <path>')
      .description(
        "an mbox file (mboxrd/mboxo, gzipped or not: a list archive's .txt.gz too), of any size, or a folder of them (an Apple Mail or Thunderbird export: each mailbox a folder label)",
      ),
  )
    .option('--folder <name>', 'the folder the messages were in (a label; Spam or Junk marks them spam)')
    .action((target: string, options: CommonOptions) => importAction('mbox', target, options));
  withCommonOptions(
    group
      .command('pst <file>')
      .description(
        'an Outlook data file (.pst, or an .ost Outlook keeps offline): its mail, each message with its folder as a label and its read mark; its calendar (repeating entries with their rules and zones) and contacts; tasks and notes in it are skipped, counted',
      ),
  )
    .option('--folder <name>', 'one folder label for every message, in place of the folders the file holds')
    .action((file: string, options: CommonOptions) => importAction('pst', file, options));
  withCommonOptions(
    group
      .command('olm <file>')
      .description(
        'an Outlook for Mac archive (.olm, from File > Export): its mail, each message with its folder as a label, its read mark and attachments; its calendar, contacts, tasks and notes are skipped, counted',
      ),
  )
    .option('--folder <name>', 'one folder label for every message, in place of the folders the archive holds')
    .action((file: string, options: CommonOptions) => importAction('olm', file, options));
  withCommonOptions(
    group
      .command('maildir <dir>')
      .description('a Maildir (or Maildir++ tree): folders become labels, flags read/starred'),
  ).action((dir: string, options: CommonOptions) => importAction('maildir', dir, options));
  withCommonOptions(
    group
      .command('folder <dir>')
      .description(
        'documents, photos, calendars, contacts and mail in a folder tree (PDF, DOCX, RTF, XLSX, PPTX, ODT/ODS/ODP, EPUB, Markdown, text, HTML, rST, JPEG, HEIC, RAW…, .ics, .vcf, .eml, .mbox), by extension or, without one, by content; a .zip in it (or named as the folder) is read as the folder it unpacks to',
      ),
  ).action((dir: string, options: CommonOptions) => importAction('folder', dir, options));
  withCommonOptions(
    group
      .command('takeout <path...>')
      .description(
        "a Google Takeout (Mail with its Gmail labels, Google Photos with sidecars and albums, Drive, Calendar, Contacts…): the unpacked folder, or the export's .zip or .tgz files as downloaded (one part names the others beside it); run it again on a newer export to add what is new and update labels",
      ),
  ).action(([target, ...parts]: string[], options: CommonOptions) => importAction('takeout', target!, options, parts));
}
