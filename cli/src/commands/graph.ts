import type { Command } from 'commander';
import {
  ContextBrief,
  EntityGet,
  EntityMerge,
  EntitySplit,
  LinkAdd,
  LinkRetract,
  MentionComplete,
  ReviewDecide,
  ReviewList,
  TrailsAppend,
  TrailsComment,
  TrailsCreate,
  TrailsGet,
  TrailsList,
  TrailsMove,
} from '@memex/contracts';
import { client, output } from '../context.js';
import { paperLines } from './papers.js';

function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

/** The graph: cards, briefs, @-mentions, links, merges, the review queue and trails. */
export function registerGraph(program: Command): void {
  program
    .command('entity <key>')
    .description('a thing by key (person:<address>, org:<domain>, topic:<slug>…) or entity:<id>: its card')
    .option('--json', 'print JSON')
    .action(async (key: string, options: { json?: boolean }) => {
      const card = await client().call(EntityGet, key.startsWith('entity:') ? { id: Number(key.slice(7)) } : { key });
      // A paper shows what it cites and what cites it first.
      const paper = card.entity.kind === 'paper' ? paperLines(card) : { lines: [], rest: card.facts };
      output(Boolean(options.json), card, () =>
        [
          `${card.entity.name}  (${card.entity.kind}, ${card.entity.key}${card.resolved_from ? `, merged from ${card.resolved_from}` : ''})`,
          ...(card.entity.aliases.length ? [`  also: ${card.entity.aliases.join(', ')}`] : []),
          `  keys: ${card.entity.keys.join(', ')}`,
          `  ${card.stats.items} items, ${card.stats.first_at?.slice(0, 10) ?? '?'} – ${card.stats.last_at?.slice(0, 10) ?? '?'}`,
          ...paper.lines,
          ...paper.rest.map((f) => {
            const other = 'entity' in f.other ? f.other.entity.name : f.other.item.title;
            return `  ${f.direction === 'out' ? '→' : '←'} ${f.rel} ${other}  (${f.basis}, ${f.made_by}, ${f.confidence})  link:${f.link_id}`;
          }),
          ...card.timeline.map(
            (t) =>
              `  ${t.item.occurred_at?.slice(0, 10) ?? '          '} ${t.item.kind} ${t.item.title}  [${t.rels.join(', ')}]`,
          ),
        ].join('\n'),
      );
    });

  program
    .command('brief')
    .description('the context brief a session with these labels (and first message) would get')
    .requiredOption('--labels <labels>', 'comma-separated labels, e.g. client:acme,person:ann@example.com')
    .option('--text <text>', "the session's first message")
    .option('--budget <bytes>', 'budget in bytes', (v) => Number(v))
    .option('--json', 'print JSON')
    .action(async (options: { labels: string; text?: string; budget?: number; json?: boolean }) => {
      const brief = await client().call(ContextBrief, {
        labels: list(options.labels),
        ...(options.text ? { text: options.text } : {}),
        ...(options.budget ? { budget_bytes: options.budget } : {}),
      });
      output(Boolean(options.json), brief, () => brief.text || '(nothing known)');
    });

  program
    .command('mention <prefix>')
    .description('@-mention completions for a prefix')
    .option('--json', 'print JSON')
    .action(async (prefix: string, options: { json?: boolean }) => {
      const { items } = await client().call(MentionComplete, { prefix });
      output(
        Boolean(options.json),
        items,
        () => items.map((i) => `${i.key}  ${i.name}  (${i.detail})`).join('\n') || 'no match',
      );
    });

  const link = program.command('link').description('assert or retract links');
  link
    .command('add <src> <rel> <dst>')
    .description('link two things (or a thing and item:<id>); yours are observed and outrank inferences')
    .option('--evidence <items>', 'comma-separated item ids it rests on')
    .action(async (src: string, rel: string, dst: string, options: { evidence?: string }) => {
      const added = await client().call(LinkAdd, {
        src,
        rel,
        dst,
        ...(options.evidence ? { evidence: list(options.evidence).map((item) => ({ item })) } : {}),
      });
      console.log(`link:${added.link_id}`);
    });
  link
    .command('retract <id>')
    .option('--reason <reason>')
    .action(async (id: string, options: { reason?: string }) => {
      await client().call(LinkRetract, {
        link_id: id.replace(/^link:/, ''),
        ...(options.reason ? { reason: options.reason } : {}),
      });
      console.log(`retracted ${id}`);
    });

  program
    .command('merge <from> <into>')
    .description('merge a thing into another (undo with memex split)')
    .action(async (from: string, into: string) => {
      const merged = await client().call(EntityMerge, { from, into });
      console.log(`merged ${from} into ${into} (merge ${merged.merge_id})`);
    });
  program
    .command('split <key-or-merge-id>')
    .description('undo a merge, by the merged-away key or the merge id')
    .action(async (what: string) => {
      const split = await client().call(EntitySplit, what.includes(':') ? { key: what } : { merge_id: what });
      console.log(`undid merge ${split.merge_id}`);
    });

  const review = program.command('review').description('the review queue: merge suggestions and low-confidence links');
  review
    .command('list', { isDefault: true })
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { items } = await client().call(ReviewList, {});
      output(
        Boolean(options.json),
        items,
        () => items.map((i) => `${i.id}  ${i.summary}`).join('\n') || 'nothing to review',
      );
    });
  review
    .command('decide <id> <decision>')
    .description('accept or reject a review entry')
    .action(async (id: string, decision: string) => {
      if (decision !== 'accept' && decision !== 'reject')
        throw new Error(`decision must be accept or reject, not "${decision}"`);
      await client().call(ReviewDecide, { id, decision });
      console.log(`${decision}ed ${id}`);
    });

  const trail = program.command('trail').description('named paths through items and things, with commentary');
  trail
    .command('create <name>')
    .option('--description <text>')
    .action(async (name: string, options: { description?: string }) => {
      const created = await client().call(TrailsCreate, {
        name,
        ...(options.description ? { description: options.description } : {}),
      });
      console.log(created.trail_id);
    });
  trail
    .command('append <trail> <target>')
    .description('add a step: item:<id> or a key')
    .option('--comment <text>')
    .action(async (trailId: string, target: string, options: { comment?: string }) => {
      const step = await client().call(TrailsAppend, {
        trail_id: trailId,
        target,
        ...(options.comment ? { comment: options.comment } : {}),
      });
      console.log(step.step_id);
    });
  trail
    .command('comment <trail> <comment>')
    .option('--step <id>', "set this step's comment instead")
    .action(async (trailId: string, comment: string, options: { step?: string }) => {
      await client().call(TrailsComment, {
        trail_id: trailId,
        comment,
        ...(options.step ? { step_id: options.step } : {}),
      });
    });
  trail
    .command('move <trail> <step> <to>')
    .description('move a step (its id, or its number as `trail show` prints it) to position <to> (1 is first)')
    .action(async (trailId: string, step: string, to: string) => {
      const position = (text: string, what: string) => {
        if (!/^[1-9]\d*$/.test(text))
          throw new Error(`${what} must be a position (1, 2, …), not ${JSON.stringify(text)}`);
        return Number(text);
      };
      let stepId = step;
      if (/^\d+$/.test(step)) {
        const { steps_list } = await client().call(TrailsGet, { trail_id: trailId });
        const found = steps_list[position(step, 'step') - 1];
        if (!found) throw new Error(`trail ${trailId} has ${steps_list.length} steps, no step ${step}`);
        stepId = found.step_id;
      }
      await client().call(TrailsMove, { trail_id: trailId, step_id: stepId, to: position(to, 'to') });
      console.log(`moved ${stepId} to ${to}`);
    });
  trail
    .command('list')
    .option('--key <key>', 'only trails through this thing')
    .option('--json', 'print JSON')
    .action(async (options: { key?: string; json?: boolean }) => {
      const { trails } = await client().call(TrailsList, options.key ? { key: options.key } : {});
      output(
        Boolean(options.json),
        trails,
        () =>
          trails.map((t) => `${t.trail_id}  ${t.name}  (${t.steps} steps, by ${t.made_by})`).join('\n') || 'no trails',
      );
    });
  trail
    .command('show <trail>')
    .option('--json', 'print JSON')
    .action(async (trailId: string, options: { json?: boolean }) => {
      const t = await client().call(TrailsGet, { trail_id: trailId });
      output(Boolean(options.json), t, () =>
        [
          `${t.name}${t.description ? ` — ${t.description}` : ''}`,
          ...t.steps_list.map(
            (s, i) =>
              `  ${i + 1}. ${'entity' in s.target ? `${s.target.entity.name} (${s.target.entity.key})` : `${s.target.item.title} (item:${s.target.item.id})`}${s.comment ? ` — ${s.comment}` : ''}`,
          ),
          ...t.comments.map((c) => `  » ${c.comment} (${c.made_by})`),
        ].join('\n'),
      );
    });
}
