import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely } from 'kysely';
import { ItemsGet, OWNER_SCOPE, type EventDefinition, type ParamsOf, type Ingest } from '@memex/contracts';
import { EventPublisher, readLog, type Bus, type DraftOf, type Published } from '@memex/bus';
import { BlobStore } from '@memex/blobs';
import { DATABASE } from '@memex/runtime';
import { memexLocations } from '@memex/locations';
import { createRegistry } from '../domain/handlers/index.js';
import { message } from '../domain/handlers/testing/build.js';
import type { IngestDatabase } from '../projection/schema.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import { IdentityClaims } from './claims.js';
import { IdentityLog } from './identities.js';
import { ItemStore, keysOf, type StoreOutcome } from './item-store.js';
import { inlineReader } from './parse.js';
import { prepareItem } from './prepare.js';
import { childId } from './records.js';

/** A process that dies (as under SIGKILL) after a number of writes to NATS: claims and publishes. */
class Crash {
  constructor(private left: number) {}

  write(): void {
    if (this.left-- <= 0) throw new Error('crashed');
  }
}

class CrashingPublisher extends EventPublisher {
  constructor(
    bus: Bus,
    private readonly crash: Crash,
  ) {
    super(bus, 'ingest');
  }

  override async publish<E extends EventDefinition>(definition: E, draft: DraftOf<E>): Promise<Published<E>> {
    this.crash.write();
    return super.publish(definition, draft);
  }
}

class CrashingClaims extends IdentityClaims {
  constructor(
    bus: Bus,
    private readonly crash: Crash,
  ) {
    super(bus);
  }

  override async claim(...args: Parameters<IdentityClaims['claim']>): ReturnType<IdentityClaims['claim']> {
    this.crash.write();
    return super.claim(...args);
  }
}

function messageWithAttachments(n: number): Buffer {
  const boundary = 'b0undary';
  const part = (name: string, body: string) =>
    `--${boundary}\r\nContent-Type: text/plain; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\n\r\n${body}\r\n`;
  return message(
    [
      ['From', 'ann@example.com'],
      ['To', 'bob@example.org'],
      ['Subject', `Report ${n}`],
      ['Date', 'Tue, 01 Dec 2009 10:00:00 +0000'],
      ['Message-ID', `<report-${n}@example.com>`],
      ['MIME-Version', '1.0'],
      ['Content-Type', `multipart/mixed; boundary="${boundary}"`],
    ],
    `--${boundary}\r\nContent-Type: text/plain\r\n\r\nSee the two files.\r\n` +
      part('a.txt', `first file ${n}`) +
      part('b.txt', `second file ${n}`) +
      `--${boundary}--\r\n`,
  );
}

describe('ItemStore: a crash between claiming and publishing loses nothing and duplicates nothing', () => {
  let h: IngestHarness;
  let publisher: EventPublisher;
  let identities: IdentityLog;
  let blobs: BlobStore;
  before(async () => {
    h = await startIngest();
    publisher = h.app.get(EventPublisher);
    blobs = h.app.get(BlobStore);
    identities = new IdentityLog(h.bus, publisher, h.app.get<Kysely<IngestDatabase>>(DATABASE));
  });
  after(async () => h.stop());

  /** Stores an item as the ingest service does; with `crashAfter`, dying after that many writes to NATS. */
  async function store(
    item: ParamsOf<typeof Ingest>['items'][number],
    graceMs: number,
    crashAfter?: number,
  ): Promise<StoreOutcome> {
    const crash = new Crash(crashAfter ?? Infinity);
    const withPublisher = crashAfter === undefined ? publisher : new CrashingPublisher(h.bus, crash);
    const registry = createRegistry();
    const readers = { reader: inlineReader(registry), registry, locations: memexLocations(), workers: null };
    const prepared = await prepareItem(readers, item, 0, OWNER_SCOPE);
    const keys = keysOf(prepared);
    const known = await identities.known([{ ...prepared, identity: prepared.parsed.identity }]);
    const db = h.app.get<Kysely<IngestDatabase>>(DATABASE);
    const log = new IdentityLog(h.bus, withPublisher, db, new CrashingClaims(h.bus, crash));
    return new ItemStore(log, withPublisher, blobs, graceMs).store(prepared, keys, known, {
      kind: 'import',
      id: 'owner',
    });
  }

  async function ingestedIds(): Promise<string[]> {
    const ids: string[] = [];
    for await (const { event } of readLog(h.bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true })) {
      ids.push((event.data as { id: string }).id);
    }
    return ids;
  }

  // Writes of a new item: identity claim, source claim, then publishes of two attachments and the message.
  for (let crashAfter = 0; crashAfter <= 4; crashAfter++) {
    test(`crash after ${crashAfter} of 5 writes, then the item is sent again`, async () => {
      const item = {
        type: 'message/rfc822',
        data: b64(messageWithAttachments(crashAfter)),
        source: { kind: 'mbox', id: 'crash' },
        external_id: `m${crashAfter}`,
      };
      const before = await ingestedIds();
      await assert.rejects(store(item, 0, crashAfter), /crashed/);

      // The retry completes the interrupted item under the id it claimed (none was claimed at 0).
      const retried = await store(item, 0);
      assert.equal(retried.status, 'created');
      const id = retried.id;
      const children = [childId(id, 0), childId(id, 1)];
      // Across the crashed attempt and the retry: each record exactly once, the message last.
      const added = (await ingestedIds()).slice(before.length);
      assert.deepEqual([...added].sort(), [id, ...children].sort());
      assert.equal(added.at(-1), id);

      // And a third send is a plain duplicate.
      assert.deepEqual(await store(item, 0), { status: 'duplicate', id });
      const read = await h.call(ItemsGet, { id, min_seq: retried.seq });
      assert.deepEqual(
        (read.meta['attachments'] as Array<{ id: string; filename: string }>).map((a) => [a.id, a.filename]),
        [
          [children[0], 'a.txt'],
          [children[1], 'b.txt'],
        ],
      );
      const child = await h.call(ItemsGet, { id: children[1]! });
      assert.equal(child.parent_id, id);
      assert.equal(child.text, `second file ${crashAfter}`);
    });
  }

  test('an unfinished claim is waited for during the grace period, not taken over', async () => {
    const item = {
      type: 'message/rfc822',
      data: b64(messageWithAttachments(99)),
      source: { kind: 'mbox', id: 'grace' },
      external_id: 'g',
    };
    await assert.rejects(store(item, 60_000, 1), /crashed/);
    // Within the grace period the claimant might still be writing: the retry waits, then adopts.
    const started = Date.now();
    const retried = await store(item, 1500);
    assert.ok(Date.now() - started >= 1000, 'waited for the claimant');
    assert.equal(retried.status, 'created');
  });
});
