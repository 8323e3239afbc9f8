import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Ingest, LinkAdd, OWNER_SCOPE, type ParamsOf, type ResultOf } from '@memex/contracts';
import { MethodRouter, type HealthProblems, type Principal } from '@memex/runtime';
import { applyMemory } from '../domain/memories.js';
import { HeadLinkService } from './head-link.service.js';
import type { HeadApi, SessionDigest } from './head-api.js';

const SESSION_DIGEST_TYPE = 'application/vnd.memex.session-digest+json';
const WEB_PAGE_TYPE = 'application/vnd.memex.web-page+json';

/**
 * The agent's work becomes knowledge (seed §3.1): when a session's turn ends the memex pulls its
 * digest from the head and writes a session_digest item, its published outputs, the web pages it
 * read (web items, fenced for agents like mail) and its memory notes, each attributed to the
 * session and linked to it; the session is linked to the things its labels name.
 */
@Injectable()
export class SessionKnowledge implements OnApplicationBootstrap, HealthProblems {
  private readonly logger = new Logger('memex:session-knowledge');
  private queue: Promise<void> = Promise.resolve();
  /** What of each session's work could not be taken in, until a later turn of it goes in whole. */
  private readonly failed = new Map<string, string[]>();

  constructor(
    private readonly link: HeadLinkService,
    private readonly router: MethodRouter,
  ) {}

  onApplicationBootstrap(): void {
    this.link.events.on('turn-ended', ({ session }: { session: string }) => {
      // One session at a time, in the order the head reported them.
      this.queue = this.queue
        .then(() => this.pull(session))
        .catch((error: Error) => this.fail(session, [`could not take in its turn: ${error.message}`]));
    });
  }

  async healthProblems(): Promise<string[]> {
    return [...this.failed].flatMap(([session, reasons]) => reasons.map((reason) => `session ${session}: ${reason}`));
  }

  private fail(session: string, reasons: string[]): void {
    for (const reason of reasons) this.logger.warn(`session ${session}: ${reason}`);
    this.failed.set(session, reasons);
  }

  /** Resolves when every turn reported so far has been taken in (tests, shutdown). */
  settled(): Promise<void> {
    return this.queue;
  }

  private async pull(session: string): Promise<void> {
    const api: HeadApi | undefined = this.link.api;
    if (!api) throw new Error('the head link is down');
    const { sessions } = await api.sessionsDigest({ since: '', session });
    for (const digest of sessions) await this.takeIn(digest);
  }

  private async takeIn(digest: SessionDigest): Promise<void> {
    const as: Principal = { scope: OWNER_SCOPE, caller: { kind: 'session', id: `head:${digest.session}` } };
    const call = <M extends typeof Ingest | typeof LinkAdd>(method: M, params: ParamsOf<M>) =>
      this.router.call(method.name, params, as) as Promise<ResultOf<M>>;
    // Sources named head, session… are the memex's own; the head's items are import:agent-session:<id>.
    const source = { kind: 'agent-session', id: digest.session };
    const { outputs, pages, memories, decisions, ...summary } = digest;
    const { results } = await call(Ingest, {
      items: [
        {
          type: SESSION_DIGEST_TYPE,
          text: JSON.stringify(summary),
          source,
          external_id: `session:${digest.session}`,
          labels: digest.labels,
        },
        ...outputs.map((output) => ({
          type: output.content_type || 'application/octet-stream',
          data: Buffer.from(output.data).toString('base64'),
          source,
          external_id: `output:${output.name}`,
          attributes: { filename: output.name },
          labels: digest.labels,
        })),
        ...pages.map((page) => ({
          type: WEB_PAGE_TYPE,
          text: JSON.stringify({ ...page, session: digest.session }),
          source,
          external_id: `web:${page.url}:${page.read_at}`,
          labels: digest.labels,
        })),
      ],
    });
    const rejected = results.flatMap((result, i) =>
      result.status === 'rejected' ? [`item ${i} rejected: ${result.reason}`] : [],
    );
    if (rejected.length > 0) this.fail(digest.session, rejected);
    else this.failed.delete(digest.session);
    const sessionThing = `session:${digest.session}`;
    const items = results.flatMap((r) => (r.id && r.status !== 'rejected' ? [r.id] : []));
    for (const memory of memories) {
      const forget = memory.action === 'forget';
      const id = await applyMemory(this.router, as, { ...memory, forget, labels: digest.labels });
      if (id) items.push(id);
    }
    for (const id of items) {
      await call(LinkAdd, { src: `item:${id}`, rel: 'part_of', dst: sessionThing, evidence: [{ item: id }] });
    }
    const evidence = [{ item: items[0]! }];
    for (const label of digest.labels) {
      await call(LinkAdd, { src: sessionThing, rel: 'about', dst: `label:${label}`, evidence });
    }
    // Approvals, denials and workflow results: the session linked to the policy or workflow and
    // the host, with what was decided quoted from the digest.
    for (const decision of decisions) {
      const quote = `${decision.kind}: ${decision.detail}`.slice(0, 2000);
      const at = Date.parse(decision.at);
      const when = Number.isNaN(at) ? {} : { valid_from: new Date(at).toISOString() };
      const target = decision.workflow
        ? `workflow:${decision.workflow}`
        : decision.policy
          ? `policy:${decision.policy}`
          : undefined;
      if (target)
        await call(LinkAdd, {
          src: sessionThing,
          rel: 'decided',
          dst: target,
          evidence: [{ item: items[0]!, quote }],
          ...when,
        });
      if (decision.host)
        await call(LinkAdd, {
          src: sessionThing,
          rel: 'involved',
          dst: `host:${decision.host}`,
          evidence: [{ item: items[0]!, quote }],
          ...when,
        });
    }
  }
}
