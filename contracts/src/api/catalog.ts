import type { MethodDefinition } from './method.js';
import { AdminFailures, AdminFailuresRetry, AdminReplay } from './admin.js';
import { graphMethods } from './graph.js';
import { headMethods } from './head.js';
import { accountMethods } from './accounts.js';
import { outgoingMethods } from './outgoing.js';
import { ruleMethods } from './rules.js';
import { proposalMethods } from './proposals.js';
import { sourceMethods } from './sources.js';
import { calendarMethods } from './calendar.js';
import { ingestMethods } from './ingest.js';
import { insightsMethods } from './insights.js';
import { ItemsGet, NotesPut } from './items.js';
import { mailMethods } from './mail.js';
import { mediaMethods } from './media.js';
import { searchMethods } from './search.js';
import { understandingMethods } from './understanding.js';
import { ScopesGet, ScopesSet, TokensCreate, TokensList, TokensRevoke } from './tokens.js';

/** Every API method, by name. The gateway routes, validates and documents from this list. */
export class MethodCatalog {
  private readonly byName = new Map<string, MethodDefinition>();

  constructor(methods: MethodDefinition[]) {
    for (const method of methods) {
      if (this.byName.has(method.name)) throw new Error(`method ${method.name} is defined twice`);
      this.byName.set(method.name, method);
    }
  }

  get(name: string): MethodDefinition | undefined {
    return this.byName.get(name);
  }

  list(): MethodDefinition[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

export const apiCatalog = new MethodCatalog([
  NotesPut,
  ItemsGet,
  TokensCreate,
  TokensList,
  TokensRevoke,
  ScopesGet,
  ScopesSet,
  AdminReplay,
  AdminFailures,
  AdminFailuresRetry,
  ...ingestMethods,
  ...mailMethods,
  ...calendarMethods,
  ...mediaMethods,
  ...searchMethods,
  ...understandingMethods,
  ...graphMethods,
  ...insightsMethods,
  ...headMethods,
  ...accountMethods,
  ...outgoingMethods,
  ...ruleMethods,
  ...proposalMethods,
  ...sourceMethods,
]);
