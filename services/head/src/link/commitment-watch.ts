import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CommitmentsList, type ResultOf } from '@memex/contracts';
import type { Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, MethodRouter, scopeRulesInForce, type HealthProblems } from '@memex/runtime';
import { commitmentFires, triggerScope } from '../domain/triggers.js';
import { HeadLinkService } from './head-link.service.js';
import { TriggerFiring } from './trigger-firing.js';

/** The most open commitments read per trigger and check (the list comes due first). */
const COMMITMENTS_PER_CHECK = 500;

/**
 * commitment.due triggers (seed §3.2): a commitment falling due is a moment, not an event of
 * the log, so this asks memex.commitments.list (the graph's, through the router, within each
 * trigger's scope) every DUE_POLL_MS and fires for open commitments whose due time came since
 * the trigger was registered — once per commitment and due date (a new date fires again).
 */
@Injectable()
export class CommitmentWatch implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('memex:commitment-watch');
  private readonly home: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private problem: string | undefined;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) config: MemexConfig,
    private readonly router: MethodRouter,
    private readonly link: HeadLinkService,
    private readonly firing: TriggerFiring,
  ) {
    this.home = config.home;
  }

  onApplicationBootstrap(): void {
    // How often open commitments are checked for ones that fell due.
    const every = Number(process.env.MEMEX_HEAD_DUE_POLL_MS ?? 60_000);
    this.timer = setInterval(() => {
      this.running ??= this.check()
        .then(() => (this.problem = undefined))
        .catch((error: Error) => {
          this.problem = error.message;
          this.logger.warn(`commitment.due triggers paused: ${error.message}`);
        })
        .finally(() => (this.running = undefined));
    }, every);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async healthProblems(): Promise<string[]> {
    return this.problem ? [`commitment.due triggers paused: ${this.problem}`] : [];
  }

  private async check(): Promise<void> {
    const api = this.link.api;
    if (!api) return; // the head is away: what fell due fires when it is back
    const triggers = (await this.firing.active()).filter((t) => t.on === 'commitment.due');
    if (triggers.length === 0) return;
    const now = new Date();
    const seq = Math.max(1, await this.bus.lastSeq());
    const rules = await scopeRulesInForce(this.bus, this.home);
    for (const trigger of triggers) {
      const { commitments } = (await this.router.call(
        CommitmentsList.name,
        { status: 'open', limit: COMMITMENTS_PER_CHECK },
        { scope: triggerScope(trigger, rules), caller: { kind: 'system', id: `trigger:${trigger.id}` } },
      )) as ResultOf<typeof CommitmentsList>;
      for (const commitment of commitments) {
        if (!commitmentFires(trigger, commitment, now)) continue;
        const eventId = `commitment:${commitment.id}@${commitment.due}`;
        if (await this.firing.firedBefore(trigger.id, eventId)) continue;
        await this.firing.fire(api, trigger, {
          eventId,
          seq,
          subject: {
            event: 'commitment.due',
            commitment: commitment.id,
            item: commitment.item_id,
            what: commitment.what,
            due: commitment.due,
            by: commitment.by,
            to: commitment.to,
          },
          message: `due ${commitment.due}: ${commitment.what}`,
        });
      }
    }
  }
}
