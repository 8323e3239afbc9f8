import { readFileSync } from 'node:fs';
import type { Ingest, ParamsOf } from '@memex/contracts';
import { sharedFile } from '@memex/testing';

export type IngestItem = ParamsOf<typeof Ingest>['items'][number];

/** A message from header lines and a body, CRLF line ends; header values written as latin1 bytes. */
export function mime(headers: Array<[string, string]>, body: string | Buffer): Buffer {
  const head = Buffer.from(`${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body.replace(/\r?\n/g, '\r\n'), 'utf8') : body]);
}

/** A real message from the shared corpus, read in place (origin and licence in its PROVENANCE.tsv). */
export function fixtureMail(path: string): Buffer {
  return readFileSync(sharedFile(`corpus/mail/${path}`));
}

/** An item of message/rfc822 for memex.ingest. */
export function mailItem(
  bytes: Buffer,
  source: string,
  externalId: string,
  attributes: Record<string, unknown> = {},
  kind = 'mbox',
): IngestItem {
  return {
    type: 'message/rfc822',
    data: bytes.toString('base64'),
    source: { kind, id: source },
    external_id: externalId,
    attributes,
  };
}
