import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

/**
 * An identity now names an item: a source + external_id, or a handler's identity (Message-ID,
 * content hash). Subject `identity:<sha256 of the identity>`, so the identity itself (an address,
 * a file path) stays out of the log. The ingest service publishes the first claim of a subject
 * with expected-last-subject-sequence 0: the log decides which item an identity belongs to, even
 * between concurrent batches and replicas. Erased with the item when it is deleted.
 */
export const IdentityClaimed = defineEvent({
  type: 'identity.claimed',
  owner: 'ingest',
  v: 1,
  description:
    'An identity (source + external_id, or a handler identity) names an item; the first claim of a subject wins. Logs written before December 2026 only: claims are now kept on the MEMEX_CLAIMS stream.',
  data: Type.Object(
    {
      item_id: Type.String({ pattern: ULID_PATTERN }),
      key: Type.Union([Type.Literal('source'), Type.Literal('content')], {
        description: '`source`: source + external_id; `content`: the handler identity (Message-ID, content hash)',
      }),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the ingest area. */
export const ingestEvents = [IdentityClaimed];
