import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsGet } from '@memex/contracts';
import { b64, startIngest, type IngestHarness } from '../../testing/service.js';
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
  });
});
