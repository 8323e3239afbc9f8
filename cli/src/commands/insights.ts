import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import {
  InferencesGet,
  InferencesList,
  InferencesMint,
  InferencesRemint,
  SignalsList,
  SignalsTriage,
  Timeline,
  type ResultOf,
} from '@memex/contracts';
import { loadConfig } from '@memex/config';
import type { MemexClient } from '@memex/client';
import { client, output } from '../context.js';

type SignalsResult = ResultOf<typeof SignalsList>;
type InferenceView = ResultOf<typeof InferencesGet>;

const KINDS = ['hidden_arc', 'stale_state', 'dangling_link', 'tag_burst'] as const;
const STATUSES = ['pending', 'all', 'new', 'snoozed', 'dismissed', 'minted'] as const;
const INFERENCE_STATUSES = ['active', 'stale', 'orphaned', 'flagged'] as const;

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return value as T;
}

function confidence(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1))
    throw new Error(`--confidence must be a number from 0 to 1, got "${value}"`);
  return n;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

export function formatSignals(result: SignalsResult): string {
  const { detection } = result;
  const lines = result.signals.map((s) => {
    const status =
      s.status === 'new'
        ? ''
        : `  [${s.status}${s.snoozed_until ? ` until ${s.snoozed_until.slice(0, 10)}` : ''}${s.present ? '' : ', no longer detected'}]`;
    return `#${s.id} ${s.kind}  ${s.score.toFixed(2)}${status}\n   ${s.text}`;
  });
  const unembedded = detection.unembedded_notes
    ? ` (${detection.unembedded_notes} without a vector yet, left out of hidden_arc)`
    : '';
  return [
    ...(lines.length ? lines : ['no signals']),
    detection.running
      ? 'detection is still running over a large corpus: these are the last run’s signals, run again shortly'
      : `${detection.ran ? 'detected now' : `unchanged since ${detection.detected_at?.slice(0, 16).replace('T', ' ') ?? 'never'}`} over ${detection.notes} notes${unembedded}`,
  ].join('\n');
}

/** "hidden_arc 2 new, 1 snoozed · …": present signals by kind and status. */
export function signalSummary(counts: SignalsResult['counts']): string {
  const parts = Object.entries(counts).flatMap(([kind, c]) => {
    const bits = (['new', 'snoozed', 'dismissed', 'minted'] as const)
      .filter((s) => c[s] > 0)
      .map((s) => `${c[s]} ${s}`);
    return bits.length ? [`${kind} ${bits.join(', ')}`] : [];
  });
  return parts.length ? parts.join(' · ') : 'no signals';
}

function formatInferenceLine(inf: InferenceView): string {
  return `${inf.citation}  ${inf.title}`;
}

/** The absolute paths `memex schedule` writes into its snippets: this checkout's node and CLI. */
function commandLine(): { node: string; cli: string; home: string } {
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/memex.js');
  return { node: process.execPath, cli, home: loadConfig().home };
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function scheduleSnippets(at: { hour: number; minute: number }): string {
  const { node, cli, home } = commandLine();
  const log = path.join(home, 'digest.log');
  const env = [`MEMEX_HOME=${home}`, ...(process.env.MEMEX_URL ? [`MEMEX_URL=${process.env.MEMEX_URL}`] : [])];
  const cron = `${at.minute} ${at.hour} * * * ${env.join(' ')} ${node} ${cli} digest >> ${log} 2>&1`;
  const plist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>memex.digest</string>
  <key>ProgramArguments</key>
  <array>
    <string>${xml(node)}</string>
    <string>${xml(cli)}</string>
    <string>digest</string>
  </array>
  <key>EnvironmentVariables</key>
  <dict>
${env
  .map((pair) => {
    const [key, ...value] = pair.split('=');
    return `    <key>${xml(key!)}</key>\n    <string>${xml(value.join('='))}</string>`;
  })
  .join('\n')}
  </dict>
  <key>StartCalendarInterval</key>
  <dict>
    <key>Hour</key>
    <integer>${at.hour}</integer>
    <key>Minute</key>
    <integer>${at.minute}</integer>
  </dict>
  <key>StandardOutPath</key>
  <string>${xml(log)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(log)}</string>
</dict>
</plist>`;
  return [
    '# cron (crontab -e), every day at the time given:',
    cron,
    '',
    '# launchd (macOS): save as ~/Library/LaunchAgents/memex.digest.plist, then `launchctl load` it:',
    plist,
  ].join('\n');
}

/** What came in over the last day (when the graph answers), then signals, then active and flagged inferences. */
async function digest(memex: MemexClient): Promise<{ text: string; value: unknown }> {
  const since = new Date(Date.now() - 86_400_000);
  const sections: string[] = [`Memex digest, ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`];
  let recent: ResultOf<typeof Timeline> | null = null;
  try {
    recent = await memex.call(Timeline, { after: since.toISOString(), limit: 20 });
    sections.push(
      `\nNew since ${since.toISOString().slice(0, 16).replace('T', ' ')}:`,
      ...(recent.items.length
        ? recent.items.map(
            (e) => `  ${e.item.occurred_at?.slice(0, 10) ?? '          '} ${e.item.kind} ${e.item.title}`,
          )
        : ['  nothing']),
    );
  } catch (error) {
    sections.push(`\n(recent items unavailable: ${(error as Error).message})`);
  }
  const signals = await memex.call(SignalsList, { limit: 5 });
  const active = await memex.call(InferencesList, { status: 'active', limit: 20 });
  const flagged = await memex.call(InferencesList, { status: 'flagged', limit: 20 });
  sections.push(
    `\nSignals: ${signalSummary(signals.counts)}`,
    ...signals.signals.map((s) => `  #${s.id} ${s.kind}: ${s.text}`),
    `\nActive inferences (hypotheses, not facts): ${active.inferences.length}`,
    ...active.inferences.map((inf) => `  ${formatInferenceLine(inf)}`),
    `\nStale inferences (re-mint or drop): ${flagged.inferences.length}`,
    ...flagged.inferences.map((inf) => `  ${formatInferenceLine(inf)}`),
  );
  return {
    text: sections.join('\n'),
    value: { recent: recent?.items ?? null, signals, active: active.inferences, flagged: flagged.inferences },
  };
}

/** The inference engine: signals and their triage, inferences, the daily digest and how to schedule it. */
export function registerInsights(program: Command): void {
  const signals = program
    .command('signals')
    .description(
      'patterns across your notes worth a look (detected now if a note changed); judge them with the options',
    )
    .option('--status <status>', STATUSES.join(' | '), 'pending')
    .option('--kind <kinds>', `only these kinds, comma-separated (${KINDS.join(', ')})`)
    .option('--limit <n>', 'how many', '50')
    .option('--dismiss <id>', 'dismiss a signal: it never comes back')
    .option('--snooze <id>', 'snooze a signal until --until')
    .option('--until <date>', 'for --snooze: ISO date or date-time')
    .option('--reopen <id>', 'undo a dismissal or snooze')
    .option('--json', 'print JSON')
    .action(
      async (options: {
        status: string;
        kind?: string;
        limit: string;
        dismiss?: string;
        snooze?: string;
        until?: string;
        reopen?: string;
        json?: boolean;
      }) => {
        const memex = client();
        const judged = [
          ['dismiss', options.dismiss],
          ['snooze', options.snooze],
          ['reopen', options.reopen],
        ].filter((pair): pair is ['dismiss' | 'snooze' | 'reopen', string] => pair[1] !== undefined);
        if (judged.length > 1) throw new Error('give one of --dismiss, --snooze, --reopen');
        if (options.snooze && !options.until) throw new Error('--snooze needs --until DATE');
        const [judgement] = judged;
        if (judgement) {
          const [action, signal] = judgement;
          const result = await memex.call(SignalsTriage, {
            signal,
            action,
            ...(action === 'snooze' ? { until: options.until! } : {}),
          });
          output(Boolean(options.json), result, () => `signal #${result.id} ${result.status}`);
          return;
        }
        const kinds = options.kind ? list(options.kind).map((k) => oneOf('--kind', k, KINDS)) : undefined;
        const result = await memex.call(SignalsList, {
          status: oneOf('--status', options.status, STATUSES),
          limit: Number(options.limit),
          ...(kinds ? { kinds } : {}),
        });
        output(Boolean(options.json), result, () => formatSignals(result));
      },
    );
  signals
    .command('mint <id>')
    .description('store the hypothesis you (or your agent) synthesized from a signal, citing its notes')
    .requiredOption('--title <text>', 'the claim')
    .requiredOption('--summary <text>', 'why the evidence supports it')
    .requiredOption('--confidence <0..1>', 'how sure', confidence)
    .requiredOption('--model <id>', 'the model that synthesized it')
    .option('--sources <ids>', "the notes it rests on, comma-separated (default: the signal's notes)")
    .action(async (id: string, _options: unknown, command: Command) => {
      // `signals` takes --json wherever it is written, so read it with the parent's options.
      const options = command.optsWithGlobals<{
        title: string;
        summary: string;
        confidence: number;
        model: string;
        sources?: string;
        json?: boolean;
      }>();
      const result = await client().call(InferencesMint, {
        signal: id,
        title: options.title,
        summary: options.summary,
        confidence: options.confidence,
        model_id: options.model,
        ...(options.sources ? { sources: list(options.sources) } : {}),
      });
      output(Boolean(options.json), result, () => `minted ${result.citation}`);
    });

  program
    .command('inferences [id]')
    .description(
      'inferences (hypotheses from your notes), re-checked against their sources now; one in full with its id',
    )
    .option('--status <status>', INFERENCE_STATUSES.join(' | '))
    .option(
      '--remint',
      'with an id: synthesize it again (fresh source hashes; the options given replace the old claim)',
    )
    .option('--title <text>', 'for --remint: the new claim')
    .option('--summary <text>', 'for --remint: the new summary')
    .option('--confidence <0..1>', 'for --remint: the new confidence', confidence)
    .option('--model <id>', 'for --remint: the model')
    .option('--sources <ids>', 'for --remint: the notes it now rests on, comma-separated')
    .option('--json', 'print JSON')
    .action(
      async (
        id: string | undefined,
        options: {
          status?: string;
          remint?: boolean;
          title?: string;
          summary?: string;
          confidence?: number;
          model?: string;
          sources?: string;
          json?: boolean;
        },
      ) => {
        const memex = client();
        const number = id === undefined ? undefined : Number(id.replace(/^#/, ''));
        if (number !== undefined && !(Number.isInteger(number) && number > 0))
          throw new Error(`an inference id is a number, got "${id}"`);
        if (options.remint) {
          if (number === undefined) throw new Error('--remint needs the inference id');
          const result = await memex.call(InferencesRemint, {
            id: number,
            ...(options.title ? { title: options.title } : {}),
            ...(options.summary ? { summary: options.summary } : {}),
            ...(options.confidence !== undefined ? { confidence: options.confidence } : {}),
            ...(options.model ? { model_id: options.model } : {}),
            ...(options.sources ? { sources: list(options.sources) } : {}),
          });
          output(Boolean(options.json), result, () => `re-minted (revision ${result.revision}) ${result.citation}`);
          return;
        }
        if (number !== undefined) {
          const inference = await memex.call(InferencesGet, { id: number });
          output(Boolean(options.json), inference, () => inference.card);
          return;
        }
        const result = await memex.call(InferencesList, {
          ...(options.status ? { status: oneOf('--status', options.status, INFERENCE_STATUSES) } : {}),
        });
        output(Boolean(options.json), result, () =>
          result.inferences.length ? result.inferences.map(formatInferenceLine).join('\n') : 'no inferences',
        );
      },
    );

  program
    .command('digest')
    .description('what came in today, then a signal summary and your active and stale inferences')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { text, value } = await digest(client());
      output(Boolean(options.json), value, () => text);
    });

  program
    .command('schedule')
    .description('print a cron line and a launchd plist that run `memex digest` daily (memex runs no daemon)')
    .option('--at <HH:MM>', 'time of day', '08:00')
    .action((options: { at: string }) => {
      const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(options.at);
      if (!match) throw new Error(`--at must be HH:MM, got "${options.at}"`);
      console.log(scheduleSnippets({ hour: Number(match[1]), minute: Number(match[2]) }));
    });
}
