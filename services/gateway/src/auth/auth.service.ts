import { timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { agentScope, DEFAULT_SCOPE_RULES, MemexError, OWNER_SCOPE, type ScopeRule } from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, loadScopeRules, ServiceHost, type Principal } from '@memex/runtime';
import type { GatewayDatabase } from './schema.js';
import { generateSecret, TokensService } from './tokens.service.js';

/** The scope rules in force, and where they come from. */
export interface ScopeRulesInForce {
  rules: ScopeRule[];
  from: 'set' | 'file' | 'defaults';
}

export type { Principal } from '@memex/runtime';

/** Reads the owner token (creating it at first start) and turns a bearer token into a scope. */
@Injectable()
export class AuthService implements OnModuleInit {
  private ownerToken!: Buffer;
  private fileRules: ScopeRulesInForce = { rules: DEFAULT_SCOPE_RULES, from: 'defaults' };

  constructor(
    @Inject(CONFIG) private readonly config: MemexConfig,
    @Inject(DATABASE) private readonly db: Kysely<GatewayDatabase>,
    private readonly host: ServiceHost,
    private readonly tokens: TokensService,
  ) {}

  onModuleInit(): void {
    this.ownerToken = Buffer.from(ensureOwnerToken(this.config.home));
    const rules = loadScopeRules(this.config.home);
    this.fileRules = { rules, from: rules === DEFAULT_SCOPE_RULES ? 'defaults' : 'file' };
  }

  /**
   * A token used right after `token create` may not be projected yet: before refusing it, wait
   * (briefly) until the tokens read model has caught up with the log.
   */
  private async findAgentToken(secret: string): Promise<{ id: string; labels: string[] } | undefined> {
    const found = await this.tokens.findActive(secret);
    if (found) return found;
    const projector = this.host.projector;
    if (!projector) return undefined;
    await projector.caughtUp(2000).catch(() => undefined);
    return this.tokens.findActive(secret);
  }

  /**
   * The scope rules in force: the last the owner set (memex.scopes.set, from the read model, so
   * every call sees a change once it is projected), else `$MEMEX_HOME/scopes.json`, else the defaults.
   */
  async scopeRules(): Promise<ScopeRulesInForce> {
    const set = await this.db.selectFrom('scope_rules').select('rules').where('key', '=', 'all').executeTakeFirst();
    return set ? { rules: set.rules, from: 'set' } : this.fileRules;
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new MemexError('unauthorized', 'missing bearer token (Authorization: Bearer <token>)');
    const secret = match[1]!;
    const given = Buffer.from(secret);
    if (given.length === this.ownerToken.length && timingSafeEqual(given, this.ownerToken)) {
      return { scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } };
    }
    const token = secret.startsWith('mxa_') ? await this.findAgentToken(secret) : undefined;
    if (!token) throw new MemexError('unauthorized', 'invalid or revoked token');
    return {
      scope: agentScope(token.id, token.labels, (await this.scopeRules()).rules),
      caller: { kind: 'session', id: `token:${token.id}` },
    };
  }
}

/** `$MEMEX_HOME/owner-token`, mode 0600, created once. */
export function ensureOwnerToken(home: string): string {
  const file = path.join(home, 'owner-token');
  fs.mkdirSync(home, { recursive: true });
  try {
    fs.writeFileSync(file, generateSecret('mxo') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  if (!token) throw new Error(`${file} is empty: delete it to have a new owner token made`);
  return token;
}
