import { Inject, Injectable } from '@nestjs/common';
import { MemexError, RerunStarted, Rerun, type ParamsOf, type ResultOf } from '@memex/contracts';
import { EventPublisher, newId, type Bus } from '@memex/bus';
import { BUS, RpcMethod, type CallContext } from '@memex/runtime';
import { latestItems } from '../jobs/backfill-task.js';
import { ModelRegistry } from '../domain/models/registry.js';
import { Budgets } from '../domain/understanding/budgets.js';
import { Lanes } from '../domain/understanding/lanes.js';
import { UnderstandingRunner } from '../domain/understanding/runner.js';
import { estimateTokens, MAX_TEXT_CHARS, TASK_NAMES, TASKS, taskFits, type TaskName } from '../domain/understanding/tasks.js';

/** Tokens an answer is allowed for in estimates (a summary, a list of topics). */
const ANSWER_TOKENS = 300;
/** Title, date and wrapping of the user message, in characters. */
const MESSAGE_OVERHEAD_CHARS = 200;

/**
 * `memex rerun --tier 2`: every item the log holds (of a kind, since a time) asked again with a
 * model version, as background jobs in the model's lane. Each output replaces only the same
 * task's earlier output for the item (the graph supersedes by task), so observed links, the
 * owner's corrections and other tasks' outputs stay.
 */
@Injectable()
export class RerunService {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly models: ModelRegistry,
    private readonly lanes: Lanes,
    private readonly budgets: Budgets,
    private readonly runner: UnderstandingRunner,
  ) {}

  @RpcMethod(Rerun)
  async rerun(params: ParamsOf<typeof Rerun>, call: CallContext): Promise<ResultOf<typeof Rerun>> {
    const model = this.models.chat(params.model);
    if (!model) {
      const known = this.models.chats().map((m) => `${m.name}@${m.version}`);
      throw new MemexError(
        'not_found',
        `no chat model ${params.model}; registered: ${known.join(', ') || 'none (memex models add URL --task …)'}`,
      );
    }
    const served = TASK_NAMES.filter((t) => model.tasks.includes(TASKS[t].capability));
    const tasks = (params.tasks as TaskName[] | undefined) ?? served;
    const refused = tasks.filter((t) => !served.includes(t));
    if (refused.length > 0)
      throw new MemexError('invalid_params', `${params.model} is not registered for ${refused.join(', ')}`);
    const since = params.since ? Date.parse(params.since) : undefined;
    const planned = (await latestItems(this.bus))
      .filter(
        (item) =>
          // As the scheduler: a model reads only what has text, and never spam.
          item.text_length > 0 &&
          !item.spam &&
          (!params.kind || item.kind === params.kind) &&
          (since === undefined || Date.parse(item.occurred_at) >= since),
      )
      .map((item) => ({ item, tasks: tasks.filter((t) => taskFits(t, item.kind)) }))
      .filter((p) => p.tasks.length > 0);

    let tokens = 0;
    let runs = 0;
    for (const { item, tasks: itemTasks } of planned) {
      for (const task of itemTasks) {
        const prompt = TASKS[task].system.length + JSON.stringify(TASKS[task].schema).length;
        tokens +=
          estimateTokens(prompt + MESSAGE_OVERHEAD_CHARS + Math.min(item.text_length, MAX_TEXT_CHARS)) + ANSWER_TOKENS;
        runs++;
      }
    }
    const cost = (tokens / 1000) * model.cost_per_1k_tokens;
    const spent = this.budgets.today(params.model);
    const { tokens_per_day: perDayTokens, cost_per_day: perDayCost } = model.budget;
    const days = Math.max(
      1,
      perDayTokens ? Math.ceil((tokens + spent.tokens) / perDayTokens) : 1,
      perDayCost ? Math.ceil((cost + spent.cost) / perDayCost) : 1,
    );
    const budget = {
      tokens_left_today: perDayTokens !== undefined ? Math.max(0, perDayTokens - spent.tokens) : null,
      cost_left_today: perDayCost !== undefined ? Math.max(0, perDayCost - spent.cost) : null,
      days,
    };
    if (params.dry_run) return { rerun_id: null, jobs: runs, tokens, cost, budget, seq: null };

    const rerunId = newId();
    const { seq } = await this.publisher.publish(RerunStarted, {
      subject: `rerun:${rerunId}`,
      actor: call.caller,
      data: {
        rerun_id: rerunId,
        tier: 2,
        model: params.model,
        tasks,
        ...(params.kind ? { kind: params.kind } : {}),
        ...(params.since ? { since: params.since } : {}),
        jobs: runs,
      },
    });
    this.runner.rerunStarted({ rerun_id: rerunId, model: params.model, jobs: runs });
    const queue = await this.lanes.queue(params.model);
    for (let i = 0; i < planned.length; i += 200) {
      await Promise.all(
        planned.slice(i, i + 200).map(({ item, tasks: itemTasks }) =>
          queue.enqueue(
            {
              task: 'understand',
              item_id: item.item_id,
              revision: item.revision,
              source_seq: item.source_seq,
              tasks: itemTasks,
              model: params.model,
              rerun_id: rerunId,
            },
            // Below new arrivals: a re-run never holds up what just came in.
            'background',
            `rerun|${rerunId}|${item.item_id}`,
          ),
        ),
      );
    }
    return { rerun_id: rerunId, jobs: runs, tokens, cost, budget, seq };
  }
}
