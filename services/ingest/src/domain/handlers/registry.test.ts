import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { FOLDER_DATA_TYPES, FOLDER_DOCUMENT_TYPES } from '@memex/exports';
import { HandlerRegistry, createRegistry } from './registry.js';
import { RejectedItem, type IngestHandler } from './handler.js';
import { decodeItemData } from './base64.js';
import { decideOutcome } from './outcome.js';
import { documentHandler } from './document/document-handler.js';
import { mailHandler } from './mail/mail-handler.js';
import { message } from './testing/build.js';
import { rejection } from './testing/parse.js';

const registry = createRegistry();

/** A handler that records whether it was asked to parse, to show what is checked before parsing. */
function spyHandler(limitBytes: number): IngestHandler & { calls: number } {
  const spy = {
    name: 'spy',
    types: ['application/x-spy'],
    attributesSchema: Type.Object({ n: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
    identityRule: 'none',
    limitBytes,
    produces: ['document' as const],
    updatable: true,
    calls: 0,
    async parse(): Promise<never> {
      spy.calls++;
      throw new Error('library blew up');
    },
  };
  return spy;
}

describe('registry: types', () => {
  it('finds the handler ignoring case and parameters', () => {
    assert.equal(registry.forType('message/rfc822').name, 'mail');
    assert.equal(registry.forType('Message/RFC822').name, 'mail');
    assert.equal(registry.forType('text/plain; charset="koi8-r"').name, 'document');
    assert.equal(registry.forType(' APPLICATION/PDF ').name, 'document');
  });

  it('rejects a claimed type with no handler, naming it', async () => {
    const error = await rejection(() => registry.forType('image/x-unknown; foo=bar'));
    assert.equal(error.reason, 'no handler for type "image/x-unknown"');
    const viaParse = await rejection(registry.parse({ type: 'application/zip', bytes: Buffer.from('PK') }));
    assert.equal(viaParse.reason, 'no handler for type "application/zip"');
  });

  it('refuses two handlers claiming one type', () => {
    assert.throws(
      () => new HandlerRegistry([mailHandler, { ...documentHandler, name: 'other', types: ['message/rfc822'] }]),
      /claimed by both/,
    );
  });

  it('lists handlers for memex.types as plain JSON with strict attribute schemas', () => {
    const list = registry.list();
    assert.deepEqual(
      list.map((h) => h.name),
      ['mail', 'document', 'photo', 'video-audio', 'calendar', 'contacts', 'agent-work'],
    );
    const [mail, docs] = list;
    assert.ok(mail && docs);
    assert.deepEqual(mail.types, ['message/rfc822', 'application/vnd.ms-outlook', 'message/x-emlx']);
    assert.deepEqual(mail.produces, ['email', 'attachment']);
    assert.equal(mail.limitBytes, 25 * 1024 * 1024);
    assert.equal(mail.updatable, false);
    assert.match(mail.identity, /Message-ID/);
    assert.equal(mail.attributes['additionalProperties'], false);
    assert.deepEqual(Object.keys(mail.attributes['properties'] as object), [
      'folder',
      'read',
      'starred',
      'received',
      'modified',
    ]);
    assert.ok(
      docs.types.includes('application/pdf') &&
        docs.types.includes('text/x-rst') &&
        docs.types.includes('text/markdown'),
    );
    assert.equal(docs.limitBytes, 100 * 1024 * 1024);
    assert.equal(docs.updatable, true);
    assert.match(docs.identity, /sha256/);
    // What goes over the wire is JSON, without TypeBox's symbol keys.
    assert.deepEqual(JSON.parse(JSON.stringify(list)), list);
  });
});

describe('registry: attributes', () => {
  const mail = message([['From', 'a@example.com']]);
  const reasonFor = async (attributes: unknown, type = 'message/rfc822') =>
    (await rejection(registry.parse({ type, bytes: mail, attributes }))).reason;

  it('rejects unknown keys, naming the key', async () => {
    assert.equal(
      await reasonFor({ colour: 'red' }),
      'unknown attribute "colour" (allowed: folder, read, starred, received, modified)',
    );
    assert.match(await reasonFor({ folder: 'Work', page_url: 'https://x' }), /^unknown attribute "page_url"/);
  });

  it('rejects wrong types, naming the key and what was expected', async () => {
    assert.equal(await reasonFor({ read: 'yes' }), 'attribute "read": expected boolean, got string "yes"');
    assert.equal(await reasonFor({ starred: 1 }), 'attribute "starred": expected boolean, got number');
    assert.equal(await reasonFor({ folder: ['a'] }), 'attribute "folder": expected string (not empty), got array');
    assert.equal(await reasonFor({ folder: '' }), 'attribute "folder": expected string (not empty), got string ""');
    assert.equal(
      await reasonFor({ received: 'yesterday' }),
      'attribute "received": expected string (date-time), got string "yesterday"',
    );
    assert.equal(
      await reasonFor({ url: 'not a url' }, 'text/plain'),
      'attribute "url": expected string (uri), got string "not a url"',
    );
  });

  it('rejects attributes that are not an object', async () => {
    assert.equal(await reasonFor([]), 'attributes: expected an object, got array');
    assert.equal(await reasonFor('folder=Work'), 'attributes: expected an object, got string "folder=Work"');
  });

  it('accepts valid attributes and no attributes', async () => {
    await registry.parse({
      type: 'message/rfc822',
      bytes: mail,
      attributes: { folder: 'Work', read: false, starred: true, received: '2024-06-01T10:00:00+02:00' },
    });
    await registry.parse({ type: 'message/rfc822', bytes: mail });
    await registry.parse({
      type: 'text/html',
      bytes: Buffer.from('<p>x</p>'),
      attributes: { url: 'https://example.com/a', modified: '2024-01-01T00:00:00Z', filename: 'a.html', title: 'A' },
    });
  });
});

describe('registry: limits and failures', () => {
  it('rejects an oversize item before parsing it', async () => {
    const spy = spyHandler(1024);
    const small = new HandlerRegistry([spy]);
    const error = await rejection(small.parse({ type: 'application/x-spy', bytes: Buffer.alloc(1025) }));
    assert.equal(error.reason, 'item is 1025 bytes, over the 1 KB limit for application/x-spy (1024 bytes)');
    assert.equal(spy.calls, 0);
  });

  it('rejects a message over 25 MB, saying so', async () => {
    const error = await rejection(
      registry.parse({ type: 'message/rfc822', bytes: Buffer.alloc(25 * 1024 * 1024 + 1, 0x61) }),
    );
    assert.equal(error.reason, 'item is 26214401 bytes, over the 25 MB limit for message/rfc822 (26214400 bytes)');
  });

  it('checks attributes before parsing', async () => {
    const spy = spyHandler(1024);
    await rejection(
      new HandlerRegistry([spy]).parse({ type: 'application/x-spy', bytes: Buffer.alloc(1), attributes: { n: 1.5 } }),
    );
    assert.equal(spy.calls, 0);
  });

  it('turns an unforeseen handler failure into a per-item rejection marked unexpected', async () => {
    const spy = spyHandler(1024);
    await assert.rejects(
      new HandlerRegistry([spy]).parse({ type: 'application/x-spy', bytes: Buffer.alloc(1) }),
      (error: unknown) => {
        assert.ok(error instanceof RejectedItem);
        assert.equal(error.unexpected, true);
        assert.equal(error.reason, 'could not read this application/x-spy item: library blew up');
        return true;
      },
    );
  });
});

describe('item data (base64)', () => {
  it('decodes valid base64, line breaks allowed', () => {
    assert.equal(decodeItemData('SGVs\r\nbG8=').toString(), 'Hello');
    assert.equal(decodeItemData('SGVsbG8').toString(), 'Hello');
    assert.equal(decodeItemData('').length, 0);
  });

  it('rejects invalid base64 with the reason instead of silently dropping characters', async () => {
    assert.equal(
      (await rejection(() => decodeItemData('SGVsbG8h!'))).reason,
      'data is not valid base64: unexpected character "!" at position 8',
    );
    assert.equal(
      (await rejection(() => decodeItemData('SGVsbG8=SGVs'))).reason,
      'data is not valid base64: data after the "=" padding at position 8',
    );
    assert.equal(
      (await rejection(() => decodeItemData('SGVsb'))).reason,
      'data is not valid base64: its length is not a whole number of bytes (truncated?)',
    );
    assert.equal(
      (await rejection(() => decodeItemData('SGVsbG8h=='))).reason,
      'data is not valid base64: wrong amount of "=" padding',
    );
    assert.match((await rejection(() => decodeItemData('SGVs-bG8_'))).reason, /unexpected character "-"/);
  });
});

describe('ingest outcome', () => {
  it('is created for a new item', () => {
    assert.deepEqual(decideOutcome(documentHandler, 'sha256:a', { bySourceId: null, byIdentity: null }), {
      result: 'created',
    });
  });

  it('is a duplicate when re-sent with the same content, or the same identity comes from elsewhere', () => {
    assert.deepEqual(
      decideOutcome(mailHandler, 'message-id:x', {
        bySourceId: { id: 'i1', identity: 'message-id:x' },
        byIdentity: { id: 'i1' },
      }),
      {
        result: 'duplicate',
        id: 'i1',
      },
    );
    assert.deepEqual(decideOutcome(documentHandler, 'sha256:a', { bySourceId: null, byIdentity: { id: 'i2' } }), {
      result: 'duplicate',
      id: 'i2',
    });
  });

  it('updates a document sent again under its source id with new content; a message never changes', () => {
    const known = { bySourceId: { id: 'i3', identity: 'sha256:old' }, byIdentity: null };
    assert.deepEqual(decideOutcome(documentHandler, 'sha256:new', known), { result: 'updated', id: 'i3' });
    assert.deepEqual(
      decideOutcome(mailHandler, 'message-id:new', { ...known, bySourceId: { id: 'i3', identity: 'message-id:old' } }),
      {
        result: 'duplicate',
        id: 'i3',
      },
    );
  });
});

/**
 * A folder import sends the files whose names give a type it lists (@memex/exports); a handler
 * taking a new type it does not list would never see a file of a folder (Jupyter notebooks were
 * passed over as "no handler takes .ipynb files" while the document handler read them).
 */
test('every type the file handlers take is one a folder import sends, a data type, or one no file name gives', () => {
  // Aliases and names of types that no file extension maps to (a file arrives under the other).
  const notByName = new Set([
    'text/x-markdown',
    'text/prs.fallenstein.rst',
    'text/rtf',
    'text/xml',
    'application/ics',
    'text/x-vcard',
    'text/directory',
  ]);
  const fileHandlers = createRegistry()
    .list()
    .filter((handler) => ['mail', 'document', 'calendar', 'contacts'].includes(handler.name));
  const unsent = fileHandlers
    .flatMap((handler) => handler.types)
    .filter((type) => !FOLDER_DOCUMENT_TYPES.has(type) && !FOLDER_DATA_TYPES.has(type) && !notByName.has(type));
  assert.deepEqual(unsent, []);
});
