import fs from 'node:fs';
import type { Command } from 'commander';
import {
  MediaEvents,
  MediaFailed,
  MediaGet,
  MediaPlaces,
  MediaRendition,
  MediaRetry,
  type ResultOf,
} from '@memex/contracts';
import { client, listLimitOption, output } from '../context.js';
import { importAction, withCommonOptions } from './import.js';
import { registerPhotoFaces } from './photo-faces.js';

function formatPhoto(photo: ResultOf<typeof MediaGet>): string {
  const meta = photo.meta as Record<string, unknown> & {
    takenAt?: string | null;
    offset?: string | null;
    camera?: { make: string | null; model: string | null } | null;
    width?: number | null;
    height?: number | null;
  };
  const lines = [`${photo.title}  (${photo.item_id})`];
  if (meta.takenAt) lines.push(`taken    ${meta.takenAt}${meta.offset ?? ' (zone unknown)'}`);
  if (meta.camera) lines.push(`camera   ${[meta.camera.make, meta.camera.model].filter(Boolean).join(' ')}`);
  if (meta.width && meta.height) lines.push(`size     ${meta.width}×${meta.height}`);
  if (photo.place) {
    const p = photo.place;
    lines.push(`place    ${p.name}, ${p.admin1}, ${p.country}  (${p.key}, ${p.distance_km.toFixed(1)} km away)`);
  }
  if (photo.status === 'pending') lines.push('thumbnails: not made yet (the media pipeline has not read it)');
  else if (photo.status === 'failed')
    lines.push(`thumbnails: none — the media pipeline gave up on it (${photo.analysis_problem}); memex photos retry`);
  else if (photo.rendition_problem) lines.push(`thumbnails: none — ${photo.rendition_problem}`);
  else lines.push(`thumbnails: ${photo.renditions.map((r) => `${r.name} ${r.width}×${r.height}`).join(', ')}`);
  if (photo.live_photo)
    lines.push(
      photo.kind === 'photo'
        ? `live     its motion clip is ${photo.live_photo.motion}`
        : `live     the motion of the still ${photo.live_photo.still}`,
    );
  if (photo.caption) lines.push(`caption  ${photo.caption}`);
  if (photo.tags.length > 0) lines.push(`tags     ${photo.tags.join(' ')}`);
  if (photo.faces !== null)
    lines.push(
      `faces    ${photo.faces}${photo.people.length ? ` — ${photo.people.map((p) => p.name).join(', ')}` : ''}  (memex photos faces list --item ${photo.item_id})`,
    );
  return lines.join('\n');
}

/** `memex import photos DIR` (with Takeout sidecars) and `memex photos show|thumbnail|failed|retry|places|events`. */
export function registerPhotos(program: Command): void {
  const importGroup = program.commands.find((c) => c.name() === 'import');
  if (!importGroup) throw new Error('register the import commands before the photo commands');
  withCommonOptions(
    importGroup
      .command('photos <dir>')
      .description(
        'photos and videos in a folder tree (JPEG, PNG, HEIC, AVIF, TIFF, RAW, MP4, MOV…), with what Google Takeout JSON sidecars (time, place, caption, album) and XMP sidecars or IPTC of Apple Photos exports (title, caption, keywords as labels, time, place, people) say',
      ),
  ).action((dir: string, options: Parameters<typeof importAction>[2]) => importAction('photos', dir, options));

  const photos = program.command('photos').description('photos: metadata, thumbnails, places, faces');
  photos
    .command('show <item-id>')
    .description('a photo’s time, camera, place and thumbnails')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const photo = await client().call(MediaGet, { item_id: id });
      output(Boolean(options.json), photo, () => formatPhoto(photo));
    });
  photos
    .command('thumbnail <item-id> <file>')
    .description('write a photo’s thumbnail (or --preview) to a WebP file')
    .option('--preview', 'the 1600-pixel preview instead of the 256-pixel thumbnail')
    .action(async (id: string, file: string, options: { preview?: boolean }) => {
      const rendition = await client().call(MediaRendition, {
        item_id: id,
        name: options.preview ? 'preview' : 'thumb',
      });
      fs.writeFileSync(file, Buffer.from(rendition.data, 'base64'));
      console.log(`${file}: ${rendition.width}×${rendition.height} WebP`);
    });
  photos
    .command('failed')
    .description('photos and videos the media pipeline gave up on after its retries, with why')
    .option('--limit <n>', 'list at most this many', '100')
    .option('--json', 'print JSON')
    .action(async (options: { limit: string; json?: boolean }) => {
      const failed = await client().call(MediaFailed, { limit: listLimitOption(options.limit) });
      output(Boolean(options.json), failed, () => failedText(failed));
      if (failed.total > 0) process.exitCode = 1;
    });
  photos
    .command('retry [item-ids...]')
    .description('run the media pipeline again on the photos and videos it gave up on (all, or those given)')
    .option('--json', 'print JSON')
    .action(async (ids: string[], options: { json?: boolean }) => {
      const result = await client().call(MediaRetry, ids.length > 0 ? { item_ids: ids } : {});
      output(Boolean(options.json), result, () =>
        [
          `queued ${result.retried.length} photo(s) or video(s) again; \`memex photos failed\` lists those that fail again`,
          ...(result.gone.length > 0 ? [`not given up on (analysed or deleted since): ${result.gone.join(', ')}`] : []),
        ].join('\n'),
      );
    });
  photos
    .command('places')
    .description('where the photos were taken, most photographed first')
    .option('--limit <n>', 'how many places', '30')
    .option('--json', 'print JSON')
    .action(async (options: { limit: string; json?: boolean }) => {
      const { places } = await client().call(MediaPlaces, { limit: Number(options.limit) });
      output(Boolean(options.json), places, () =>
        places.length === 0
          ? 'no photo has a place yet'
          : places
              .map(
                (p) =>
                  `${String(p.photos).padStart(5)}  ${p.place.name}, ${p.place.admin1}, ${p.place.country}  ${p.first?.slice(0, 10) ?? ''}…${p.last?.slice(0, 10) ?? ''}`,
              )
              .join('\n'),
      );
    });
  photos
    .command('events')
    .description('photos grouped into events, and trips away from home of a night or more')
    .option('--from <date>', 'taken at or after (ISO date)')
    .option('--to <date>', 'taken before (ISO date)')
    .option('--json', 'print JSON')
    .action(async (options: { from?: string; to?: string; json?: boolean }) => {
      const iso = (d: string | undefined) => (d ? new Date(d).toISOString() : undefined);
      const from = iso(options.from);
      const to = iso(options.to);
      const result = await client().call(MediaEvents, { ...(from ? { from } : {}), ...(to ? { to } : {}) });
      output(Boolean(options.json), result, () =>
        [
          `home: ${result.home?.name ?? 'unknown (no photo has a place)'}`,
          ...result.trips.map(
            (t) =>
              `trip  ${t.start.slice(0, 10)} → ${t.end.slice(0, 10)}  ${t.nights} night(s)  ${t.places.map((p) => p.name).join(', ')}  (${t.items.length} items)`,
          ),
          ...result.events.map(
            (e) =>
              `event ${e.start.slice(0, 16)} → ${e.end.slice(11, 16)}  ${e.place?.name ?? ''}  (${e.items.length} items)`,
          ),
        ].join('\n'),
      );
    });
  registerPhotoFaces(photos);
}

function failedText(failed: ResultOf<typeof MediaFailed>): string {
  if (failed.total === 0) return 'the media pipeline has given up on nothing';
  return [
    `${failed.total} photo(s) or video(s) the media pipeline gave up on; after a fix, run: memex photos retry`,
    ...failed.items.map(
      (item) =>
        `  ${item.item_id} ${item.kind} "${item.title}" at ${item.failed_at}, ${item.attempts} attempts\n    ${item.reason}`,
    ),
    ...(failed.items.length < failed.total ? [`  … and ${failed.total - failed.items.length} more (--limit)`] : []),
  ].join('\n');
}
