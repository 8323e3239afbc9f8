import fs from 'node:fs';
import type { Command } from 'commander';
import { FacesClusters, FacesCrop, FacesList, FacesMerge, FacesMove, FacesName } from '@memex/contracts';
import { client, output } from '../context.js';

/** `memex photos faces …`: the face clusters, and the user's corrections of them. */
export function registerPhotoFaces(photos: Command): void {
  const faces = photos.command('faces').description('faces found in photos and videos, grouped by person');
  faces
    .command('clusters', { isDefault: true })
    .description('the face clusters, largest first, with their names')
    .option('--limit <n>', 'how many clusters', '50')
    .option('--json', 'print JSON')
    .action(async (options: { limit: string; json?: boolean }) => {
      const result = await client().call(FacesClusters, { limit: Number(options.limit) });
      output(Boolean(options.json), result, () =>
        [
          ...result.clusters.map(
            (c) =>
              `${c.cluster_id}  ${String(c.faces).padStart(4)} faces in ${c.items} items  ${c.name ? `${c.name} (${c.person_key})` : '(unnamed)'}`,
          ),
          `${result.unclustered} faces not in any cluster yet`,
        ].join('\n'),
      );
    });
  faces
    .command('list')
    .description('the faces of a cluster (--cluster) or of a photo or video (--item)')
    .option('--cluster <id>', 'a cluster id')
    .option('--item <id>', 'an item id')
    .option('--json', 'print JSON')
    .action(async (options: { cluster?: string; item?: string; json?: boolean }) => {
      const { faces: list } = await client().call(FacesList, {
        ...(options.cluster ? { cluster_id: options.cluster } : {}),
        ...(options.item ? { item_id: options.item } : {}),
      });
      output(Boolean(options.json), list, () =>
        list
          .map(
            (f) =>
              `${f.face_id}  ${f.frame_at === null ? '' : `at ${f.frame_at}s  `}${f.cluster_id ?? '(no cluster)'}  ${f.person?.name ?? ''}${f.corrected ? '  (moved by you)' : ''}`,
          )
          .join('\n'),
      );
    });
  faces
    .command('crop <face-id> <file>')
    .description('write a face’s thumbnail to a WebP file')
    .action(async (faceId: string, file: string) => {
      const crop = await client().call(FacesCrop, { face_id: faceId });
      fs.writeFileSync(file, Buffer.from(crop.data, 'base64'));
      console.log(`${file}: WebP`);
    });
  faces
    .command('name <cluster-id> <name>')
    .description('name a cluster: its photos show that person in the graph')
    .option('--person <key>', 'join this graph person (person:…) instead of one made from the name')
    .action(async (clusterId: string, name: string, options: { person?: string }) => {
      const { seq } = await client().call(FacesName, {
        cluster_id: clusterId,
        name,
        ...(options.person ? { person_key: options.person } : {}),
      });
      console.log(`named ${clusterId} ${name} (seq ${seq})`);
    });
  faces
    .command('move <face-id> [cluster-id]')
    .description('move a face into another cluster, or without one out of any (not this person)')
    .action(async (faceId: string, clusterId: string | undefined) => {
      const { seq } = await client().call(FacesMove, { face_id: faceId, to_cluster: clusterId ?? null });
      console.log(`${faceId} ${clusterId ? `moved to ${clusterId}` : 'is in no cluster now'} (seq ${seq})`);
    });
  faces
    .command('merge <from> <into>')
    .description('merge a cluster into another')
    .action(async (from: string, into: string) => {
      const { seq } = await client().call(FacesMerge, { from, into });
      console.log(`${from} merged into ${into} (seq ${seq})`);
    });
}
