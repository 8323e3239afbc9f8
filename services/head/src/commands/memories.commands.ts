import { Injectable } from '@nestjs/common';
import { HeadMemoriesImport, isMemexError, LinkAdd, OWNER_SCOPE, type ParamsOf, type ResultOf } from '@memex/contracts';
import { MethodRouter, RpcMethod, type CallContext, type Principal } from '@memex/runtime';
import { applyMemory } from '../domain/memories.js';

type Result = ResultOf<typeof HeadMemoriesImport>;

/**
 * The head's existing memories table, migrated (seed §3.1). It comes as the table's export
 * (`memex head import-memories FILE`), not over the link: the memex may ask the head only its
 * five methods, and sessions.digest carries what a session remembered or forgot in a turn, not
 * the table's standing rows (many of them from before the link, of sessions long gone).
 */
@Injectable()
export class MemoriesCommands {
  constructor(private readonly router: MethodRouter) {}

  @RpcMethod(HeadMemoriesImport)
  async import(params: ParamsOf<typeof HeadMemoriesImport>, call: CallContext): Promise<Result> {
    const result: Result = { remembered: [], forgotten: 0, rejected: [] };
    for (const [index, row] of params.memories.entries()) {
      // A memory a session made stays that session's write, as if it came over the link.
      const as: Principal = row.session
        ? { scope: OWNER_SCOPE, caller: { kind: 'session', id: `head:${row.session}` } }
        : call;
      try {
        const note = await applyMemory(this.router, as, {
          about: row.about,
          text: row.text,
          forget: row.forgotten ?? false,
          labels: row.labels ?? [],
        });
        if (!note) {
          result.forgotten++;
          continue;
        }
        if (row.session) {
          await this.router.call(
            LinkAdd.name,
            { src: `item:${note}`, rel: 'part_of', dst: `session:${row.session}`, evidence: [{ item: note }] },
            as,
          );
        }
        result.remembered.push({ index, note });
      } catch (error) {
        if (!isMemexError(error)) throw error;
        result.rejected.push({ index, reason: `${error.code}: ${error.message}` });
      }
    }
    return result;
  }
}
