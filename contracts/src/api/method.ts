import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';

/** The services that exist today (mail-sync, calendar-sync and media come with their issues). */
export const ServiceNames = [
  'gateway',
  'ingest',
  'pipelines',
  'search',
  'graph',
  'insights',
  'head',
  'mail-sync',
  'media',
  'calendar-sync',
  'sources',
] as const;
export type ServiceName = (typeof ServiceNames)[number];

/** Every query accepts it: wait (bounded) until the read model has applied this log sequence. */
export const MinSeq = Type.Optional(
  Type.Integer({
    minimum: 0,
    description:
      'Read-your-writes: wait until the read model has applied this stream sequence (the `seq` a write answered).',
  }),
);

export type MethodKind = 'command' | 'query';

export interface MethodDefinition<
  P extends TObject = TObject,
  R extends TSchema = TSchema,
  K extends MethodKind = MethodKind,
> {
  /** Public name, `memex.<area>.<verb>`. */
  readonly name: string;
  /** The service that answers it (over `memex.rpc.<service>.<name without memex.>`). */
  readonly service: ServiceName;
  /** Commands append events and answer `seq`; queries read a read model and accept `min_seq`. */
  readonly kind: K;
  /** `owner`: only the owner's token may call it. */
  readonly access: 'any' | 'owner';
  readonly summary: string;
  readonly params: P;
  readonly result: R;
}

/** A method's params as callers pass them: queries also take `min_seq`. */
export type ParamsOf<M extends MethodDefinition> =
  M extends MethodDefinition<infer P, TSchema, infer K>
    ? Static<P> & (K extends 'query' ? { min_seq?: number } : unknown)
    : never;
export type ResultOf<M extends MethodDefinition> = Static<M['result']>;

export function defineMethod<P extends TObject, R extends TSchema, K extends MethodKind>(
  def: MethodDefinition<P, R, K>,
): MethodDefinition<P, R, K> {
  if (!/^memex(\.[a-z][a-z_]*)+$/.test(def.name))
    throw new Error(`method name "${def.name}" must be memex.<area>.<verb>`);
  const strict = { ...def.params, additionalProperties: false } as P;
  if (def.kind === 'query' && !('min_seq' in def.params.properties)) {
    return {
      ...def,
      params: Type.Object(
        { ...def.params.properties, min_seq: MinSeq },
        { additionalProperties: false, description: def.params.description },
      ) as unknown as P,
    };
  }
  return { ...def, params: strict };
}

/** The NATS request/reply subject of a method. */
export function rpcSubject(method: Pick<MethodDefinition, 'service' | 'name'>): string {
  return `memex.rpc.${method.service}.${method.name.replace(/^memex\./, '')}`;
}

/** A command's answer always carries the stream sequence of its last event. */
export const Seq = Type.Integer({ minimum: 0, description: 'stream sequence of the last event written' });
