import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PhotoTagged, Search } from '@memex/contracts';
import { SearchHarness } from './test-support.js';

describe('search: what media saw in a photo (object:, tag:)', () => {
  let h: SearchHarness;
  let dog: string;
  let beach: string;

  before(async () => {
    h = await SearchHarness.start();
    dog = await h.ingest({ title: 'IMG_0001.jpg', text: 'IMG_0001.jpg', kind: 'photo' });
    beach = await h.ingest({ title: 'IMG_0002.jpg', text: 'IMG_0002.jpg', kind: 'photo' });
    const tagged = (id: string, tags: string[]) =>
      h.publisher.publish(PhotoTagged, {
        subject: `item:${id}`,
        actor: { kind: 'pipeline', id: 'media' },
        data: {
          item_id: id,
          revision: 1,
          tagger: 'human/centernet',
          tags: tags.map((tag) => ({ tag, score: 0.9 })),
          caption: null,
          caption_model: null,
          caption_problem: null,
        },
      });
    await tagged(dog, ['object:dog', 'object:person']);
    await tagged(beach, ['object:person', 'tag:Beach']);
    // Tagged again: the new tags replace the old (a re-run of the detector).
    await tagged(dog, ['object:dog']);
    await h.settle();
  });

  after(async () => h?.stop());

  test('object:dog and tag:beach find the photos media tagged so; the latest tags count', async () => {
    const ids = async (q: string) => (await h.call(Search, { q })).hits.map((hit) => hit.id).sort();
    assert.deepEqual(await ids('object:dog'), [dog]);
    assert.deepEqual(await ids('tag:beach'), [beach]);
    assert.deepEqual(await ids('object:person'), [beach], "the dog photo's re-run dropped person");
    assert.deepEqual(await ids('object:cat'), []);
    assert.deepEqual(
      await ids('object:dog object:person'),
      [beach, dog].sort(),
      'values of one filter are alternatives',
    );
  });
});
