import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsDelete, ItemsGet } from '@memex/contracts';
import { b64, startIngest, type IngestHarness } from '../../../testing/service.js';
import { pdf } from '../testing/build.js';
import { registry } from '../testing/parse.js';

const HEADER = ['Sparse Attention for Mail Triage', 'Ada Moreau1, Bruno Okafor2', 'Abstract', 'We triage mail.'];
const REFERENCES = ['References', '[1] A. Moreau, "Dense retrieval," in Proc. SIGIR, 2019.'];

/** Two arXiv versions of one paper (different bytes), its journal copy stating the arXiv id and DOI, and a DOI-only paper. */
const V1 = pdf([['arXiv:2301.04567v1 [cs.IR] 12 Jan 2023', ...HEADER], REFERENCES]);
const V2 = pdf([['arXiv:2301.04567v2 [cs.IR] 3 Mar 2023', ...HEADER, 'Revised.'], REFERENCES]);
const DOI_ONLY = pdf([[...HEADER.slice(0, 2), 'DOI: 10.1145/3626772.3657700', ...HEADER.slice(2)], REFERENCES]);

describe('papers at ingest: a PDF that is a paper, and its identity (seed §4.5)', () => {
  test('a PDF naming its arXiv id, DOI or a references section is a paper; its identity is the arXiv id, else the DOI, else the bytes', async () => {
    const parse = (bytes: Buffer, info: Record<string, string> = {}) =>
      registry.parse({ type: 'application/pdf', bytes, attributes: info });
    const v1 = await parse(V1);
    assert.equal(v1.kind, 'paper');
    assert.equal(v1.identity, 'arxiv:2301.04567');
    assert.deepEqual((v1.meta as { paper?: unknown }).paper, { doi: null, arxiv: '2301.04567' });
    assert.equal((await parse(V2)).identity, 'arxiv:2301.04567', 'another version is the same paper');
    assert.equal((await parse(DOI_ONLY)).identity, 'doi:10.1145/3626772.3657700');
    const refsOnly = await parse(pdf([HEADER, REFERENCES]));
    assert.equal(refsOnly.kind, 'paper');
    assert.match(refsOnly.identity, /^sha256:/);
    const letter = await parse(
      pdf([['Dear Ada,', 'the references you asked for are below.', 'References', 'none yet']]),
    );
    assert.equal(letter.kind, 'document', 'a references heading on the first page alone does not make a paper');
  });

  describe('through memex.ingest', () => {
    let h: IngestHarness;
    before(async () => {
      h = await startIngest();
    });
    after(async () => h?.stop());

    test('two versions of one arXiv paper from two places are one item; a DOI-only paper is another', async () => {
      const first = await h.call(Ingest, {
        items: [
          { type: 'application/pdf', data: b64(V1), source: { kind: 'folder', id: 'papers' }, external_id: 'a.pdf' },
        ],
      });
      assert.equal(first.results[0]!.status, 'created');
      const id = first.results[0]!.id!;
      const second = await h.call(Ingest, {
        items: [
          {
            type: 'application/pdf',
            data: b64(V2),
            source: { kind: 'folder', id: 'downloads' },
            external_id: '2301.04567v2.pdf',
          },
          {
            type: 'application/pdf',
            data: b64(DOI_ONLY),
            source: { kind: 'folder', id: 'downloads' },
            external_id: 'x.pdf',
          },
        ],
      });
      assert.deepEqual(second.results[0], { status: 'duplicate', id });
      assert.equal(second.results[1]!.status, 'created');
      const item = await h.call(ItemsGet, { id, min_seq: first.seq });
      assert.equal(item.kind, 'paper');
    });

    test("an arXiv version naming its DOI and the journal's copy with only the DOI are one item, in either order; deletion releases both", async () => {
      const paper = (stamp: string | null, doi: string | null, title: string) =>
        pdf([
          [
            ...(stamp ? [stamp] : []),
            title,
            'Ada Moreau1, Bruno Okafor2',
            ...(doi ? [`DOI: ${doi}`] : []),
            'Abstract',
            'Text.',
          ],
          REFERENCES,
        ]);
      const item = (name: string, bytes: Buffer) => ({
        type: 'application/pdf',
        data: b64(bytes),
        source: { kind: 'folder', id: 'library' },
        external_id: name,
      });
      const ingest = async (name: string, bytes: Buffer) =>
        (await h.call(Ingest, { items: [item(name, bytes)] })).results[0]!;
      // arXiv first: its DOI is an alias the journal's copy finds.
      const arxiv = await ingest(
        'a1.pdf',
        paper('arXiv:2402.00001v2 [cs.CL] 1 Mar 2024', '10.1000/alias.1', 'Dense Mail'),
      );
      assert.equal(arxiv.status, 'created');
      assert.deepEqual(await ingest('j1.pdf', paper(null, '10.1000/alias.1', 'Dense Mail')), {
        status: 'duplicate',
        id: arxiv.id,
      });
      // The journal's copy first: the arXiv version naming its DOI is that item.
      const journal = await ingest('j2.pdf', paper(null, '10.1000/alias.2', 'Sparse Mail'));
      assert.equal(journal.status, 'created');
      assert.deepEqual(
        await ingest('a2.pdf', paper('arXiv:2402.00002v1 [cs.CL] 2 Mar 2024', '10.1000/alias.2', 'Sparse Mail')),
        {
          status: 'duplicate',
          id: journal.id,
        },
      );
      // Deleting the arXiv item releases its DOI too: the journal's copy is new again.
      await h.call(ItemsDelete, { id: arxiv.id! });
      assert.equal((await ingest('j3.pdf', paper(null, '10.1000/alias.1', 'Dense Mail'))).status, 'created');
    });
  });
});
