import { extractKeyframes, type MadeKeyframe } from './domain/keyframes.js';
import { makeRenditions, NoRendition, type MadeRendition } from './domain/renditions.js';

/*
 * The pictures of a photo or a video, from its bytes: what the media service makes of an item,
 * and what a `memex worker` makes of its own files on its CPU (docs/sources.md "Workers") — no
 * models, no database, no events (media stores them and publishes). The worker imports this
 * entry only (`@memex/media/pictures`), not the service.
 */
export type { MadeKeyframe, MadeRendition };

/** A photo's renditions, or why it has none (the decoder's reason); any other failure throws (worth a retry). */
export async function photoRenditions(
  bytes: Buffer,
  format: string,
): Promise<{ renditions: MadeRendition[]; problem: string | null }> {
  try {
    return { renditions: await makeRenditions(bytes, format), problem: null };
  } catch (error) {
    if (!(error instanceof NoRendition)) throw error;
    return { renditions: [], problem: error.message };
  }
}

/** A video's keyframes, or the first line of why ffmpeg could not read them. */
export async function videoKeyframes(bytes: Buffer): Promise<{ keyframes: MadeKeyframe[]; problem: string | null }> {
  try {
    return { keyframes: await extractKeyframes(bytes), problem: null };
  } catch (error) {
    return { keyframes: [], problem: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
}
