import type { Actor, Scope } from '@memex/contracts';

/** Who is calling, handed to every RPC handler beside its params. */
export interface CallContext {
  scope: Scope;
  caller: Actor;
}
