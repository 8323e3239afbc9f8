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
import { AnalysisFailures } from './commands/analysis-failures.service.js';
import { FaceCorrections } from './commands/faces.service.js';
import { PeopleSync } from './commands/people.js';
import { loadFaceModel, type FaceModel } from './domain/faces/index.js';
import { PlaceIndex } from './domain/places.js';
import { VisionCaptioner } from './domain/tags/captions.js';
import { ObjectTagger } from './domain/tags/objects.js';
import { PhotoEventsPublisher } from './jobs/photo-events.js';
import { mediaWorkersFromEnv, PhotoJobs } from './jobs/photo-jobs.js';
import { MediaProjector } from './projection/media.projector.js';
import { FacesQueries } from './queries/faces.service.js';
import { PhotosService } from './queries/photos.service.js';

/** The face model this process runs (null when MEMEX_FACE_MODEL=off). */
const FACE_MODEL = Symbol('FACE_MODEL');
/** The object tagger (null when MEMEX_OBJECT_TAGS=off) and the vision endpoint (when MEMEX_VISION_URL is set). */
const TAGGING = Symbol('TAGGING');

export interface MediaOptions {
  /** Photos analysed at once in this process (default MEMEX_MEDIA_WORKERS, else 2). */
  workers?: number;
  /** A failed photo is tried again after this × 2^attempt ms (default 1000). */
  retryBaseMs?: number;
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
    const jobOptions = { workers: options.workers ?? mediaWorkersFromEnv(), retryBaseMs: options.retryBaseMs ?? 1000 };
    return {
      module: MediaModule,
      imports: [MemexModule.forService({ service: 'media', config, schema: 'media' })],
      providers: [
        { provide: PlaceIndex, useFactory: () => PlaceIndex.load() },
        { provide: FACE_MODEL, useFactory: () => loadFaceModel() },
        {
          provide: TAGGING,
          useFactory: async () => ({
            tagger: process.env['MEMEX_OBJECT_TAGS'] === 'off' ? null : await ObjectTagger.load(),
            captioner: VisionCaptioner.fromEnv(),
          }),
        },
        {
          provide: PhotoJobs,
          useFactory: (
            bus: Bus,
            publisher: EventPublisher,
            blobs: BlobStore,
            places: PlaceIndex,
            faces: FaceModel | null,
            people: PeopleSync,
            tagging: ConstructorParameters<typeof PhotoJobs>[7],
            photoEvents: PhotoEventsPublisher,
          ) => new PhotoJobs(bus, publisher, blobs, places, jobOptions, faces, people, tagging, photoEvents),
          inject: [BUS, EventPublisher, BlobStore, PlaceIndex, FACE_MODEL, PeopleSync, TAGGING, PhotoEventsPublisher],
        },
        MediaProjector,
        PhotosService,
        FacesQueries,
        PeopleSync,
        PhotoEventsPublisher,
        FaceCorrections,
        AnalysisFailures,
        MediaRunner,
      ],
    };
  }
}
