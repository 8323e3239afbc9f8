import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  Ingest,
  FacesClusters,
  FacesCrop,
  FacesList,
  FacesMerge,
  FacesMove,
  FacesName,
  ItemsDelete,
  MediaGet,
  MemexError,
  type ResultOf,
} from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import { waitUntil } from '@memex/testing';
import { faceTestSet, faceTestSetSkip, slideshow, type Person, type TestPhoto } from './testing/faces.js';
import { recordingToolsSkip } from './testing/recordings.js';
import { MediaHarness } from './testing/harness.js';

type FaceView = ResultOf<typeof FacesList>['faces'][number];

const recordingSkip = await recordingToolsSkip();

/** Who a found face is, by the band of the photo its centre falls in (null: no one is there). */
function whoIs(face: FaceView, photo: TestPhoto): Person | null {
  const centre = face.box[0]! + face.box[2]! / 2;
  return photo.people.find((p) => centre >= p.from && centre < p.to)?.person ?? null;
}

describe(
  'faces: detection, clustering as photos arrive, naming, moving and merging',
  { skip: faceTestSetSkip() },
  () => {
    let h: MediaHarness;
    let dir: string;
    let set: TestPhoto[];
    let ids: string[];
    /** Every face found, with the person it truly is. */
    const truth = new Map<string, Person | null>();

    const clusterOf = async (person: Person) => {
      const { clusters } = await h.call(FacesClusters, {});
      for (const cluster of clusters) {
        const { faces } = await h.call(FacesList, { cluster_id: cluster.cluster_id });
        const mine = faces.filter((f) => truth.get(f.face_id) === person).length;
        if (mine > faces.length / 2) return { ...cluster, faces };
      }
      throw new Error(`no cluster of ${person}`);
    };

    /** How many faces an item has; null until the face model has looked (or the read model has the item). */
    const facesOf = async (id: string) => (await h.call(MediaGet, { item_id: id }).catch(() => null))?.faces ?? null;

    before(async () => {
      h = await MediaHarness.start();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-faces-'));
      set = await faceTestSet();
      const files = set.map((photo, i) => {
        const file = path.join(dir, `${String(i).padStart(2, '0')}.jpg`);
        fs.writeFileSync(file, photo.jpeg);
        return file;
      });
      // One by one, as photos arrive: clustering is incremental.
      ids = [];
      for (const file of files) ids.push(...(await h.ingestFiles([file])));
      for (const id of ids)
        await waitUntil(async () => (await facesOf(id)) !== null, `faces of ${id}`, {
          timeoutMs: 180_000,
        });
    });

    after(async () => {
      await h?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('finds the faces of the test set (recall) with few false ones, each with a crop', async () => {
      let expected = 0;
      let found = 0;
      let falsePositives = 0;
      for (const [i, photo] of set.entries()) {
        const { faces } = await h.call(FacesList, { item_id: ids[i]! });
        expected += photo.people.length;
        const seen = new Set<Person>();
        for (const face of faces) {
          const who = whoIs(face, photo);
          truth.set(face.face_id, who);
          if (who && !seen.has(who)) {
            seen.add(who);
            found++;
          } else falsePositives++;
        }
        assert.equal((await h.call(MediaGet, { item_id: ids[i]! })).faces, faces.length);
      }
      const recall = found / expected;
      console.log(
        `# faces: detection recall ${found}/${expected} = ${recall.toFixed(3)}, false positives ${falsePositives} (in ${set.length} images, ${set.filter((p) => p.people.length === 0).length} with no face)`,
      );
      assert.ok(recall >= 0.9, `recall ${recall}`);
      assert.ok(falsePositives <= 2, `${falsePositives} false positives`);
      const face = [...truth.keys()][0]!;
      const crop = await h.call(FacesCrop, { face_id: face });
      assert.equal(Buffer.from(crop.data, 'base64').subarray(8, 12).toString(), 'WEBP');
    });

    it('clusters each person apart (purity), without a name until one is given', async () => {
      const { clusters, unclustered } = await h.call(FacesClusters, {});
      let clustered = 0;
      let majority = 0;
      for (const cluster of clusters) {
        const { faces } = await h.call(FacesList, { cluster_id: cluster.cluster_id });
        const counts = new Map<Person | null, number>();
        for (const f of faces)
          counts.set(truth.get(f.face_id) ?? null, (counts.get(truth.get(f.face_id) ?? null) ?? 0) + 1);
        clustered += faces.length;
        majority += Math.max(...counts.values());
        assert.equal(cluster.name, null);
      }
      const purity = majority / clustered;
      const people = [...truth.values()].filter((p) => p !== null).length;
      console.log(
        `# faces: ${clusters.length} clusters, purity ${majority}/${clustered} = ${purity.toFixed(3)}; ${unclustered} faces unclustered; ${people} true faces`,
      );
      assert.ok(purity >= 0.95, `purity ${purity}`);
      assert.ok((await clusterOf('collins')).faces.length >= 6);
      assert.ok((await clusterOf('hopper')).faces.length >= 6);
    });

    it('naming a cluster puts the person on its photos; a name must not be blank', async () => {
      const collins = await clusterOf('collins');
      await h.call(FacesName, { cluster_id: collins.cluster_id, name: 'Eileen Collins' });
      const { faces } = await h.call(FacesList, { cluster_id: collins.cluster_id });
      assert.ok(faces.every((f) => f.person?.key === 'person:eileen-collins' && f.person.name === 'Eileen Collins'));
      const photo = await h.call(MediaGet, { item_id: faces[0]!.item_id });
      assert.deepEqual(
        photo.people.map((p) => p.key),
        ['person:eileen-collins'],
      );
      await assert.rejects(
        h.call(FacesName, { cluster_id: collins.cluster_id, name: '  ' }),
        (e: MemexError) => e.code === 'invalid_params',
      );
    });

    it('a face moved out stays out, even after a replay of the read model; merging joins two clusters', async () => {
      const hopper = await clusterOf('hopper');
      const moved = hopper.faces[0]!;
      await h.call(FacesMove, { face_id: moved.face_id, to_cluster: null });
      let [face] = (await h.call(FacesList, { item_id: moved.item_id })).faces.filter(
        (f) => f.face_id === moved.face_id,
      );
      assert.equal(face!.cluster_id, null);
      assert.equal(face!.corrected, true);

      const collins = await clusterOf('collins');
      await h.call(FacesMerge, { from: hopper.cluster_id, into: collins.cluster_id });
      const merged = await h.call(FacesList, { cluster_id: collins.cluster_id });
      assert.equal(merged.faces.length, collins.faces.length + hopper.faces.length - 1);
      assert.ok(merged.faces.every((f) => f.person?.name === 'Eileen Collins'));
      await assert.rejects(
        h.call(FacesMerge, { from: hopper.cluster_id, into: collins.cluster_id }),
        (e: MemexError) => e.code === 'conflict',
      );

      const before = await h.call(FacesClusters, {});
      await h.media.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
      assert.deepEqual(await h.call(FacesClusters, {}), before);
      [face] = (await h.call(FacesList, { item_id: moved.item_id })).faces.filter((f) => f.face_id === moved.face_id);
      assert.equal(face!.cluster_id, null, 'the move outranks the model on replay');
    });

    it('finds faces on a video’s keyframes, at their second', { skip: recordingSkip }, async () => {
      // A slideshow: the coffee cup for 3 seconds, then Grace Hopper (a scene change at 3 s).
      const [cup, hopper] = ['coffee.png', 'hopper, as is'].map((name) => set.find((p) => p.name === name)!.jpeg);
      const video = await slideshow([cup!, hopper!], 3);
      const { results } = await h.call(Ingest, {
        items: [
          {
            type: 'video/mp4',
            data: video.toString('base64'),
            source: { kind: 'folder', id: 'videos' },
            external_id: 'slideshow.mp4',
            attributes: { filename: 'slideshow.mp4' },
          },
        ],
      });
      const id = results[0]!.id!;
      await waitUntil(async () => (await facesOf(id)) !== null, 'faces of the video', {
        timeoutMs: 180_000,
      });
      const { faces } = await h.call(FacesList, { item_id: id });
      assert.equal(faces.length, 1, JSON.stringify(faces));
      assert.ok(Math.abs(faces[0]!.frame_at! - 3) < 0.5, `the face is on the frame at ${faces[0]!.frame_at} s`);
      // Her cluster (merged into Collins's by now): the one holding her photos' faces.
      assert.ok(faces[0]!.cluster_id, 'it joins a cluster');
      const members = await h.call(FacesList, { cluster_id: faces[0]!.cluster_id });
      assert.ok(members.faces.some((f) => truth.get(f.face_id) === 'hopper'));
    });

    it('a deletion removes the photo’s faces, crops and embeddings, and a replay agrees', async () => {
      const i = set.findIndex((p) => p.people.length === 2);
      const { faces } = await h.call(FacesList, { item_id: ids[i]! });
      assert.equal(faces.length, 2);
      // Blobs are named by their bytes' SHA-256.
      const shas = await Promise.all(
        faces.map(async (f) =>
          createHash('sha256')
            .update(Buffer.from((await h.call(FacesCrop, { face_id: f.face_id })).data, 'base64'))
            .digest('hex'),
        ),
      );
      for (const sha of shas) assert.ok(await h.blobs.has(sha));
      const { seq } = await h.call(ItemsDelete, { id: ids[i]! });
      await assert.rejects(
        h.call(MediaGet, { item_id: ids[i]!, min_seq: seq }),
        (e: MemexError) => e.code === 'not_found',
      );
      for (const f of faces)
        await assert.rejects(h.call(FacesCrop, { face_id: f.face_id }), (e: MemexError) => e.code === 'not_found');
      for (const sha of shas) assert.equal(await h.blobs.has(sha), false, 'face crop blob removed');
      await h.media.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
      assert.deepEqual((await h.call(FacesList, { item_id: ids[i]! })).faces, []);
    });
  },
);
