import { Injectable } from '@nestjs/common';
import { EventPublisher } from '@memex/bus';
import {
  agentScope,
  MemexError,
  ScopeRulesSet,
  ScopesGet,
  ScopesSet,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { RpcMethod, type CallContext } from '@memex/runtime';
import { AuthService } from './auth.service.js';
import { TokensService } from './tokens.service.js';

/** The scope rules: read (with what each token sees under them) and set by the owner, as events. */
@Injectable()
export class ScopesService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly auth: AuthService,
    private readonly tokens: TokensService,
  ) {}

  @RpcMethod(ScopesGet)
  async get(): Promise<ResultOf<typeof ScopesGet>> {
    const { rules, from } = await this.auth.scopeRules();
    const { tokens } = await this.tokens.list();
    return {
      rules,
      from,
      // Computed by the rule the gateway applies to the tokens' calls.
      tokens: tokens.map((token) => {
        const scope = agentScope(token.id, token.labels, rules);
        return { id: token.id, kinds: scope.kind === 'agent' ? scope.kinds : [] };
      }),
    };
  }

  @RpcMethod(ScopesSet)
  async set(params: ParamsOf<typeof ScopesSet>, call: CallContext): Promise<ResultOf<typeof ScopesSet>> {
    const labels = params.rules.map((rule) => rule.when);
    const twice = labels.filter((label, i) => labels.indexOf(label) !== i);
    if (twice.length > 0) {
      throw new MemexError(
        'invalid_params',
        `one rule per label: ${[...new Set(twice)].join(', ')} given more than once`,
      );
    }
    const rules = params.rules.map((rule) => ({ when: rule.when, kinds: [...new Set(rule.kinds)].sort() }));
    const { seq } = await this.publisher.publish(ScopeRulesSet, {
      subject: 'scope_rules:all',
      actor: call.caller,
      data: { rules },
    });
    // A rule that narrows what agents see must hold once answered (see TokensService.holds).
    await this.tokens.holds(seq, 'the scope rules');
    return { seq };
  }
}
