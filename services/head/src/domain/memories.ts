import { createHash } from 'node:crypto';
import { GraphRef, ItemsDelete, LinkAdd, NotesPut, type ParamsOf, type ResultOf } from '@memex/contracts';
import { Value } from '@sinclair/typebox/value';
import type { MethodRouter, Principal } from '@memex/runtime';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A note id (ULID-shaped) that the same memory always maps to, so `forget` finds what `remember`
 * wrote — whether it came in a session's digest or from the head's memories table. The first
 * character stays below 8, as a ULID's must.
 */
export function memoryNoteId(about: string, text: string): string {
  const digest = createHash('sha256').update(`${about}\n${text}`).digest();
  let id = CROCKFORD[digest[0]! % 8]!;
  for (let i = 1; id.length < 26; i++) id += CROCKFORD[digest[i]! % 32]!;
  return id;
}

export interface Memory {
  /** What the memory is about: a thing's key (org:acme.example, person:…) or words. */
  about: string;
  text: string;
  forget: boolean;
  labels: string[];
}

/**
 * One memory as a note on its thing: `remember` puts the note (linked `about` the thing when
 * `about` is a key), `forget` deletes it. Returns the note's id when it was kept.
 */
export async function applyMemory(router: MethodRouter, as: Principal, memory: Memory): Promise<string | null> {
  const call = <M extends typeof NotesPut | typeof LinkAdd | typeof ItemsDelete>(method: M, params: ParamsOf<M>) =>
    router.call(method.name, params, as) as Promise<ResultOf<M>>;
  const id = memoryNoteId(memory.about, memory.text);
  if (memory.forget) {
    await call(ItemsDelete, { id }).catch(() => undefined); // forgetting what was never kept is done
    return null;
  }
  await call(NotesPut, { id, title: memory.about, body: memory.text, labels: memory.labels });
  if (Value.Check(GraphRef, memory.about) && !memory.about.startsWith('item:')) {
    await call(LinkAdd, { src: `item:${id}`, rel: 'about', dst: memory.about, evidence: [{ item: id }] });
  }
  return id;
}
