import type { INestApplicationContext } from '@nestjs/common';
import {
  agentScope,
  DEFAULT_SCOPE_RULES,
  encodeVector,
  OWNER_SCOPE,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
  type Scope,
  noteMarkdownOf,
} from '@memex/contracts';
import { Bus, callMethod, EventPublisher, newId, type NamedDraft, bindDraft } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { IngestModule } from '@memex/ingest';
import { ServiceHost, startService, type ServiceModuleFactory } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import type { EngineNote } from '../domain/engine/index.js';
import { InsightsModule } from '../insights.module.js';
import { toMarkdown } from './markdown.js';

export const TEST_SPACE = 'test-vectors@1';

/** The insights service (and ingest, for notes.put and deletion) in this process against a fresh TestEnv. */
export interface InsightsHarness {
  env: TestEnv;
  bus: Bus;
  publisher: EventPublisher;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope?: Scope): Promise<ResultOf<M>>;
  /**
   * Writes generated notes as ingest would (`note.put`, created at their createdAt, front matter
   * with their dates, type and tags, [[links]] by title) and their item-level vectors as pipelines
   * would (`embedding.computed`); answers the memex id of each note by its generated id.
   */
  feed(notes: readonly EngineNote[], options?: { labels?: string[] }): Promise<Map<string, string>>;
  /** The `embedding.computed` pipelines would publish for a note's revision. */
  embed(id: string, revision: number, vector: Float32Array): Promise<number>;
  /** Waits until the insights read model has applied `seq`. */
  applied(seq: number): Promise<void>;
  insights: INestApplicationContext;
  stop(): Promise<void>;
}

/** An agent's scope under the default rules (notes and documents for every label). */
export function agent(labels: string[]): Scope {
  return agentScope(`agent-${labels.join('-') || 'none'}`, labels, DEFAULT_SCOPE_RULES);
}

export async function startInsights(
  options: { services?: ServiceModuleFactory[]; config?: Partial<MemexConfig> } = {},
): Promise<InsightsHarness> {
  const env = await createTestEnv(options.config);
  const apps: INestApplicationContext[] = [];
  for (const factory of [
    (config) => IngestModule.register(config),
    ...(options.services ?? []),
  ] as ServiceModuleFactory[]) {
    apps.push(await startService(factory, env.config));
  }
  const insights = await startService((config) => InsightsModule.register(config), env.config);
  apps.push(insights);
  const bus = await Bus.connect(env.config.natsUrl, 'insights-test');
  const publisher = new EventPublisher(bus);
  const applied = (seq: number) => insights.get(ServiceHost).projector!.waitFor(seq, 60_000);
  const publish = async (drafts: NamedDraft[]) =>
    (await publisher.publishAll(drafts.map((draft) => bindDraft(draft)))).map((p) => p.seq);
  const embedDraft = (id: string, revision: number, vector: Float32Array): NamedDraft => ({
    type: 'embedding.computed',
    subject: `item:${id}`,
    actor: { kind: 'pipeline', id: 'text@1' },
    data: {
      item_id: id,
      revision,
      pipeline: 'text@1',
      space: TEST_SPACE,
      dims: vector.length,
      total: 0,
      piece: 0,
      pieces: 1,
      item: encodeVector(vector),
      vectors: [],
    },
  });
  return {
    env,
    bus,
    publisher,
    insights,
    call: (method, params, scope = OWNER_SCOPE) => callMethod(bus, method, params, { scope, timeoutMs: 120_000 }),
    async feed(notes, feedOptions = {}) {
      const ids = new Map(notes.map((note) => [note.id, newId()]));
      const titles = new Map(notes.map((note) => [note.id, note.title]));
      const seqs = await publish(
        notes.map((note) => {
          const body = toMarkdown(note, (link) => titles.get(link) ?? link);
          return {
            type: 'note.put',
            v: 2,
            subject: `item:${ids.get(note.id)}`,
            actor: { kind: 'user', id: 'owner' },
            kind: 'note',
            labels: feedOptions.labels ?? [],
            occurred_at: note.createdAt.toISOString(),
            data: { id: ids.get(note.id)!, title: note.title, body, markdown: noteMarkdownOf(body) },
          };
        }),
      );
      const embedded = notes.flatMap((note, i) =>
        note.embedding.length > 0 ? [embedDraft(ids.get(note.id)!, seqs[i]!, note.embedding)] : [],
      );
      const last = embedded.length > 0 ? (await publish(embedded)).at(-1)! : seqs.at(-1)!;
      await applied(last);
      return ids;
    },
    async embed(id, revision, vector) {
      const [seq] = await publish([embedDraft(id, revision, vector)]);
      await applied(seq!);
      return seq!;
    },
    applied,
    async stop() {
      await bus.close();
      for (const app of apps.reverse()) await app.close();
      await env.stop();
    },
  };
}
