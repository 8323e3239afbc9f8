import type { Command } from 'commander';
import { Search, Similar, type SearchHit, type SearchMode } from '@memex/contracts';
import { client, output } from '../context.js';

const MODES: SearchMode[] = ['hybrid', 'keyword', 'meaning'];
/** The most hits one memex.search answers: a larger --limit reads page after page. */
const PAGE = Search.params.properties.limit.maximum!;
/** The deepest hit search pages to. */
const MOST = Search.params.properties.offset.maximum! + PAGE;

/** `**term**` as bold on a terminal, plain otherwise. */
function emphasize(text: string): string {
  return process.stdout.isTTY ? text.replace(/\*\*(.+?)\*\*/g, '\x1b[1m$1\x1b[22m') : text;
}

function signals(why: SearchHit['why']): string {
  const parts: string[] = [];
  if (why.keyword)
    parts.push(`keyword #${why.keyword.rank}${why.keyword.fields.length ? ` in ${why.keyword.fields.join('+')}` : ''}`);
  if (why.meaning) parts.push(`meaning #${why.meaning.rank} (${why.meaning.similarity.toFixed(2)})`);
  return parts.join(', ');
}

export function formatHits(hits: SearchHit[]): string {
  if (hits.length === 0) return 'nothing found';
  return hits
    .map((hit, i) => {
      const when = hit.occurred_at ? `  ${hit.occurred_at.slice(0, 10)}` : '';
      const why = signals(hit.why);
      const snippet = hit.snippet.replace(/\s+/g, ' ').trim();
      return `${i + 1}. [${hit.kind}] ${hit.title || '(untitled)'}${when}${why ? `  — ${why}` : ''}\n   ${hit.id}${snippet ? `\n   ${emphasize(snippet)}` : ''}`;
    })
    .join('\n');
}

export function registerSearch(program: Command): void {
  program
    .command('search <query>')
    .description(
      'search by words and meaning: "a phrase", from:ann, to:bob, kind:email, before:2021-03, after:2020, -word, prefix*',
    )
    .option('--mode <mode>', `${MODES.join(' | ')}`, 'hybrid')
    .option('--kind <kinds>', 'only these kinds, comma-separated (email,document,note…)')
    .option('--limit <n>', 'how many hits', '20')
    .option('--json', 'print JSON')
    .action(async (query: string, options: { mode: string; kind?: string; limit: string; json?: boolean }) => {
      if (!(MODES as string[]).includes(options.mode))
        throw new Error(`--mode must be one of ${MODES.join(', ')}, got "${options.mode}"`);
      const asked = Number(options.limit);
      if (!Number.isInteger(asked) || asked < 1)
        throw new Error(`--limit must be a whole number from 1, got "${options.limit}"`);
      const limit = Math.min(asked, MOST);
      const kinds = options.kind
        ?.split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      const page = (offset: number) =>
        client().call(Search, {
          q: query,
          mode: options.mode as SearchMode,
          limit: Math.min(PAGE, limit - offset),
          ...(offset ? { offset } : {}),
          ...(kinds?.length ? { kinds } : {}),
        });
      const result = await page(0);
      // Later pages rank deeper, so an item can move across a page boundary: shown once.
      const shownIds = new Set(result.hits.map((hit) => hit.id));
      while (result.next_offset !== null && result.next_offset < limit) {
        const next = await page(result.next_offset);
        result.hits.push(...next.hits.filter((hit) => !shownIds.has(hit.id)));
        next.hits.forEach((hit) => shownIds.add(hit.id));
        Object.assign(result, { next_offset: next.next_offset, total: next.total, total_exact: next.total_exact });
      }
      output(Boolean(options.json), result, () => {
        const notes = result.query.expansions.map((e) => `${e.how}: ${e.word} → ${e.matches.join(', ')}`);
        const groups = Object.entries(result.groups).map(([kind, hits]) => `${kind} ${hits.length}`);
        const found = `${result.total_exact ? '' : 'about '}${result.total.toLocaleString('en-US')} found`;
        return [
          formatHits(result.hits),
          ...(notes.length ? [`(${notes.join('; ')})`] : []),
          ...(groups.length > 1 ? [`by kind: ${groups.join(', ')}`] : []),
          `${found}, ${result.hits.length} shown` +
            (asked > MOST
              ? ` (--limit ${asked} capped at ${MOST}, the deepest search pages to: narrow it with kind:, from:, after:…)`
              : ''),
        ].join('\n');
      });
    });
  program
    .command('similar <id>')
    .description('items most like this one (by meaning)')
    .option('--limit <n>', 'how many', '10')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { limit: string; json?: boolean }) => {
      const result = await client().call(Similar, { id, limit: Number(options.limit) });
      output(Boolean(options.json), result, () => formatHits(result.hits));
    });
}
