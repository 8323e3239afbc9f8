import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import {
  Ingest,
  ItemsContent,
  ItemsDelete,
  ItemsGet,
  LocationReachable,
  LocationUnreachable,
  agentScope,
  DEFAULT_SCOPE_RULES,
  MemexError,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { BlobStore, sha256 } from '@memex/blobs';
import { fileLocation } from '@memex/locations';
import { startIngest, type IngestHarness } from '../testing/service.js';

const AGENT = agentScope('01J00000000000000000000000', [], DEFAULT_SCOPE_RULES);

describe('memex.ingest of files read in place (a location instead of bytes)', () => {
  let h: IngestHarness;
  let dir: string;
  let blobs: BlobStore;
  before(async () => {
    h = await startIngest();
    blobs = new BlobStore(h.env.config.blobsDir);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-in-place-'));
  });
  after(async () => {
    await h.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const photo = (seed: number) =>
    sharp({ create: { width: 320, height: 200, channels: 3, background: { r: seed, g: 90, b: 200 } } })
      .jpeg()
      .toBuffer();

  test('the item keeps the location, not a copy; content reads the file; a move is the same item, updated', async () => {
    const bytes = await photo(10);
    const first = path.join(dir, 'beach.jpg');
    await fs.writeFile(first, bytes);
    const source = { kind: 'folder', id: 'camera' };
    const created = await h.call(Ingest, {
      items: [
        {
          type: 'image/jpeg',
          location: fileLocation(first),
          source,
          external_id: 'f1',
          attributes: { filename: 'beach.jpg' },
        },
      ],
    });
    assert.equal(created.results[0]!.status, 'created', JSON.stringify(created.results[0]));
    const id = created.results[0]!.id!;
    const item = await h.call(ItemsGet, { id, min_seq: created.seq });
    assert.equal(item.location, fileLocation(first));
    assert.equal(item.unreachable, null);
    assert.equal(item.size, bytes.length);
    assert.equal(await blobs.has(sha256(bytes)), false, 'no blob of the original');

    const content = await h.call(ItemsContent, { id });
    assert.deepEqual(Buffer.from(content.data, 'base64'), bytes);
    assert.equal(content.size, bytes.length);

    // Moved: same source + external_id, same bytes, a new location → the same item, a new revision.
    const second = path.join(dir, 'holiday', 'beach-2019.jpg');
    await fs.mkdir(path.dirname(second));
    await fs.rename(first, second);
    const moved = await h.call(Ingest, {
      items: [
        {
          type: 'image/jpeg',
          location: fileLocation(second),
          source,
          external_id: 'f1',
          attributes: { filename: 'beach-2019.jpg' },
        },
      ],
    });
    assert.deepEqual(moved.results[0], { status: 'updated', id });
    const again = await h.call(Ingest, {
      items: [
        {
          type: 'image/jpeg',
          location: fileLocation(second),
          source,
          external_id: 'f1',
          attributes: { filename: 'beach-2019.jpg' },
        },
      ],
    });
    assert.deepEqual(again.results[0], { status: 'duplicate', id });
    const after = await h.call(ItemsGet, { id, min_seq: moved.seq });
    assert.equal(after.location, fileLocation(second));
    assert.equal(after.revision, 2);

    // The folder goes away: the item stays and says so; it comes back with the folder.
    const sources = new EventPublisher(h.bus, 'sources');
    const prefix = `${fileLocation(path.join(dir, 'holiday'))}/`;
    await fs.rename(path.join(dir, 'holiday'), path.join(dir, 'away'));
    const gone = await sources.publish(LocationUnreachable, {
      subject: 'source:camera',
      actor: { kind: 'system', id: 'test' },
      data: { source_id: 'camera', prefix, why: 'the folder is gone' },
    });
    const unreachable = await h.call(ItemsGet, { id, min_seq: gone.seq });
    assert.equal(unreachable.unreachable?.why, 'the folder is gone');
    await assert.rejects(h.call(ItemsContent, { id }), (error: unknown) => {
      assert.ok(error instanceof MemexError && error.code === 'unavailable', String(error));
      assert.match(error.message, /ENOENT.*unreachable since .*the folder is gone/);
      return true;
    });
    await fs.rename(path.join(dir, 'away'), path.join(dir, 'holiday'));
    const back = await sources.publish(LocationReachable, {
      subject: 'source:camera',
      actor: { kind: 'system', id: 'test' },
      data: { source_id: 'camera', prefix },
    });
    assert.equal((await h.call(ItemsGet, { id, min_seq: back.seq })).unreachable, null);
    assert.deepEqual(Buffer.from((await h.call(ItemsContent, { id })).data, 'base64'), bytes);

    // Deleting the item deletes what the memex holds, never the file.
    await h.call(ItemsDelete, { id });
    assert.deepEqual(await fs.readFile(second), bytes);
  });

  test('a location that cannot be read, is malformed, or comes from an agent is rejected with the reason', async () => {
    const source = { kind: 'folder', id: 'camera' };
    const results = await h.call(Ingest, {
      items: [
        { type: 'text/plain', location: fileLocation(path.join(dir, 'missing.txt')), source },
        { type: 'text/plain', location: 'file:notes/a.txt', source },
        { type: 'text/plain', location: 'ftp://example.com/a.txt', source },
        { type: 'text/plain', location: fileLocation(path.join(dir, 'missing.txt')), text: 'both', source },
      ],
    });
    const reasons = results.results.map((r) => r.reason ?? r.status);
    assert.match(reasons[0]!, /could not read file:.*missing\.txt: no such file \(ENOENT\)/);
    assert.match(reasons[1]!, /absolute, normalized path/);
    assert.match(reasons[2]!, /scheme "ftp:", which this memex cannot read \(it reads file:/);
    assert.match(reasons[3]!, /could not read|exactly one/);
    await fs.writeFile(path.join(dir, 'note.txt'), 'a note');
    const agent = await h.call(
      Ingest,
      { items: [{ type: 'text/plain', location: fileLocation(path.join(dir, 'note.txt')), source }] },
      AGENT,
    );
    assert.match(agent.results[0]!.reason!, /only the owner/);
  });
});
