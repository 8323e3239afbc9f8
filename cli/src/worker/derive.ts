import { headers, type Msg } from '@nats-io/transport-node';
import {
  WORKER_PICTURE_HEADER,
  WORKER_PROBLEM_HEADER,
  type DerivedPicture,
  type WorkerDeriveRequest,
} from '@memex/locations';
import { endStream, JobServer, readRequested, serveJobs } from './jobs.js';

type Pictures = typeof import('@memex/media/pictures');

/**
 * Makes media's pictures of the worker's own files on this machine's CPU (docs/sources.md
 * "Workers"): the media service asks on `memex.worker.<name>.derive` for a photo's renditions or
 * a video's keyframes, stores what comes back and publishes the events it owns, so the original
 * bytes stay here. At most `jobs` at once; the rest wait in NATS's queue group order.
 */
export class DeriveServer extends JobServer {
  async start(): Promise<void> {
    // Loaded here, not at import: sharp and ffmpeg are only this command's (the CLI's others start faster).
    const pictures = await import('@memex/media/pictures');
    this.subscription = serveJobs(this.nc, this.name, 'derive', this.slots, (message) =>
      this.answer(message, pictures),
    );
  }

  private async answer(message: Msg, pictures: Pictures): Promise<void> {
    const request = message.json<WorkerDeriveRequest>();
    const bytes = await readRequested(this.files, message, request.path);
    if (!bytes) return;
    const made = await this.make(request, bytes, pictures);
    for (const { webp, ...picture } of made.pictures) {
      const h = headers();
      h.set(WORKER_PICTURE_HEADER, JSON.stringify(picture));
      message.respond(webp, { headers: h });
    }
    this.done++;
    this.log(
      `worker ${this.name}: ${request.task} of ${request.path}: ${made.pictures.length} pictures${made.problem ? ` (${made.problem})` : ''}`,
    );
    endStream(message, made.problem === null ? null : WORKER_PROBLEM_HEADER, made.problem ?? '');
  }

  /** The pictures, or the decoder's reason when the file has none (media says it as the analysis's problem). */
  private async make(
    request: WorkerDeriveRequest,
    bytes: Buffer,
    { photoRenditions, videoKeyframes }: Pictures,
  ): Promise<{ pictures: DerivedPicture[]; problem: string | null }> {
    if (request.task === 'renditions') {
      const { renditions, problem } = await photoRenditions(bytes, request.format);
      return { pictures: renditions, problem };
    }
    const { keyframes, problem } = await videoKeyframes(bytes);
    return { pictures: keyframes, problem };
  }
}
