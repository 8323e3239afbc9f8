import {
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { BlobStore } from '@memex/blobs';
import { EventPublisher, type Bus } from '@memex/bus';
import { BUS, MemexModule } from '@memex/runtime';
import { PlaceIndex } from './domain/places.js';
import { mediaWorkersFromEnv, PhotoJobs } from './jobs/photo-jobs.js';
import { MediaProjector } from './projection/media.projector.js';
import { PhotosService } from './queries/photos.service.js';

export interface MediaOptions {
  /** Photos analysed at once in this process (default MEMEX_MEDIA_WORKERS, else 2). */
  workers?: number;
}

/** Starts taking photos off the queue once the connections are up; stops before they close. */
@Injectable()
class MediaRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly jobs: PhotoJobs) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.jobs.stop();
  }
}

/**
 * Photos and videos (seed §7.1): the media pipeline (renditions, places) as jobs any media
 * process takes, and the media read model with its queries.
 */
@Module({})
export class MediaModule {
  static register(config: MemexConfig, options: MediaOptions = {}): DynamicModule {
    const workers = options.workers ?? mediaWorkersFromEnv();
    return {
      module: MediaModule,
      imports: [MemexModule.forService({ service: 'media', config, schema: 'media' })],
      providers: [
        { provide: PlaceIndex, useFactory: () => PlaceIndex.load() },
        {
          provide: PhotoJobs,
          useFactory: (bus: Bus, publisher: EventPublisher, blobs: BlobStore, places: PlaceIndex) =>
            new PhotoJobs(bus, publisher, blobs, places, workers),
          inject: [BUS, EventPublisher, BlobStore, PlaceIndex],
        },
        MediaProjector,
        PhotosService,
        MediaRunner,
      ],
    };
  }
}
