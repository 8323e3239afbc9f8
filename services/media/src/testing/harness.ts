import fs from 'node:fs';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import {
  Ingest,
  MediaGet,
  OWNER_SCOPE,
  MEDIA_FILE_TYPES,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, callMethod } from '@memex/bus';
import { IngestModule } from '@memex/ingest';
import { startService } from '@memex/runtime';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';
import { MediaModule, type MediaOptions } from '../media.module.js';

/** Ingest and media in this process against a fresh TestEnv, called over NATS as the gateway would. */
export class MediaHarness {
  private constructor(
    readonly env: TestEnv,
    readonly bus: Bus,
    readonly blobs: BlobStore,
    public media: INestApplicationContext,
    private readonly apps: INestApplicationContext[],
  ) {}

  static async start(options: MediaOptions = {}): Promise<MediaHarness> {
    const env = await createTestEnv();
    const ingest = await startService((config) => IngestModule.register(config), env.config);
    const media = await startService((config) => MediaModule.register(config, options), env.config);
    const bus = await Bus.connect(env.config.natsUrl, 'media-test');
    return new MediaHarness(env, bus, new BlobStore(env.config.blobsDir), media, [ingest, media]);
  }

  /** Stops the media service: photos ingested meanwhile wait on its queue. */
  async stopMedia(): Promise<void> {
    await this.media.close();
    this.apps.splice(this.apps.indexOf(this.media), 1);
  }

  /** Starts the media service (again) with `options`: what it kept is read back from NATS and Postgres. */
  async startMedia(options: MediaOptions = {}): Promise<void> {
    this.media = await startService((config) => MediaModule.register(config, options), this.env.config);
    this.apps.push(this.media);
  }

  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope: Scope = OWNER_SCOPE): Promise<ResultOf<M>> {
    return callMethod(this.bus, method, params, { scope, timeoutMs: 30_000 });
  }

  /** Photo and video files through memex.ingest, as `memex import folder` sends them; their item ids in order. */
  async ingestFiles(files: string[], labels: string[] = []): Promise<string[]> {
    const { results } = await this.call(Ingest, {
      items: files.map((file) => ({
        type: MEDIA_FILE_TYPES[path.extname(file).slice(1).toLowerCase()]!,
        data: fs.readFileSync(file).toString('base64'),
        source: { kind: 'folder', id: 'test' },
        external_id: file,
        attributes: { filename: path.basename(file) },
        labels,
      })),
    });
    return results.map((r, i) => {
      if (!r.id) throw new Error(`${files[i]} was ${r.status}: ${r.reason ?? ''}`);
      return r.id;
    });
  }

  /** A photo once the media pipeline has read it. */
  async analyzed(itemId: string, timeoutMs = 60_000): Promise<ResultOf<typeof MediaGet>> {
    let photo: ResultOf<typeof MediaGet> | undefined;
    await waitUntil(
      async () => {
        photo = await this.call(MediaGet, { item_id: itemId }).catch(() => undefined);
        return photo?.status === 'analyzed';
      },
      `photo ${itemId} analyzed`,
      { timeoutMs },
    );
    return photo!;
  }

  async stop(): Promise<void> {
    for (const app of this.apps.reverse()) await app.close();
    await this.bus.close();
    await this.env.stop();
  }
}
