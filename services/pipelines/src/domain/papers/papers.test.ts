import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatedPapers, pdfText } from '../../testing/papers.js';
import { readPaper } from './paper-reading.js';
import { fieldsOf } from './references.js';

describe('papers: header and references by rules', () => {
  test('generated papers in four reference styles: every header field and every reference read back', () => {
    const papers = generatedPapers(12);
    let references = 0;
    for (const paper of papers) {
      const { text, pages: ranges } = pdfText(paper.pages);
      const reading = readPaper(text, ranges, {}, { title: 'fallback', year: null });
      assert.ok(reading.paper, `${paper.title} is a paper`);
      const { title, authors, year, doi, arxiv, abstract, venue } = reading.paper;
      assert.deepEqual(
        { title, authors, year, doi, arxiv },
        {
          title: paper.title,
          authors: paper.authors,
          year: paper.year,
          doi: paper.doi,
          arxiv: paper.arxiv,
        },
      );
      assert.equal(abstract, paper.abstract);
      assert.equal(venue, `Published in Proceedings of ${paper.venue} ${paper.year}`);
      assert.equal(reading.references.length, paper.references.length, `${paper.style}: ${paper.title}`);
      for (const [i, ref] of reading.references.entries()) {
        const truth = paper.references[i]!;
        assert.equal(ref.year, truth.year, `${paper.style} reference ${i}: ${ref.text}`);
        assert.ok(ref.title, `${paper.style} reference ${i} has a title: ${ref.text}`);
        // The span is the entry as printed: its first line is where the reference's text begins.
        assert.ok(ref.text.startsWith(text.slice(ref.start, ref.end).split('\n')[0]!), ref.text);
        assert.ok(ref.page && ref.page >= 2, 'references are on the pages after the first');
        references++;
      }
    }
    assert.ok(references > 40, `${references} references read`);
  });

  test('reference layouts: IEEE quotes, LNCS colon, ACL year after names, author–year in brackets, identifiers', () => {
    assert.deepEqual(
      fieldsOf(
        'K. He, X. Zhang, S. Ren, and J. Sun, "Deep residual learning for image recognition," in Proc. CVPR, 2016, pp. 770-778.',
      ),
      {
        title: 'Deep residual learning for image recognition',
        authors: ['K. He', 'X. Zhang', 'S. Ren', 'J. Sun'],
        year: 2016,
        yearText: '2016',
      },
    );
    assert.deepEqual(
      fieldsOf(
        'Abadi, M., Agarwal, A., Barham, P.: TensorFlow: Large-scale machine learning on heterogeneous systems. In: OSDI. Springer (2016)',
      ),
      {
        title: 'TensorFlow: Large-scale machine learning on heterogeneous systems',
        authors: ['M. Abadi', 'A. Agarwal', 'P. Barham'],
        year: 2016,
        yearText: '2016',
      },
    );
    assert.deepEqual(
      fieldsOf(
        'Shunyu Yao, Jeffrey Zhao, and Yuan Cao. 2022. ReAct: Synergizing reasoning and acting in language models. arXiv preprint arXiv:2210.03629.',
      ),
      {
        title: 'ReAct: Synergizing reasoning and acting in language models',
        authors: ['Shunyu Yao', 'Jeffrey Zhao', 'Yuan Cao'],
        year: 2022,
        yearText: '2022',
      },
    );
    assert.deepEqual(
      fieldsOf('Golfarelli, M. (2003). Handling large workloads by profiling and clustering. In DaWaK, pp. 212–223.'),
      {
        title: 'Handling large workloads by profiling and clustering',
        authors: ['M. Golfarelli'],
        year: 2003,
        yearText: '2003',
      },
    );
  });

  test('a PDF without identifiers or a references section is not a paper; one with a DOI in its information is', () => {
    const letter = pdfText([['Dear Sir,', 'the invoice is attached. We expect payment within 30 days.']]);
    assert.deepEqual(readPaper(letter.text, letter.pages, {}, { title: 'Letter', year: 2020 }), {
      paper: null,
      references: [],
    });
    const report = pdfText([['Quarterly report', 'Revenue grew.']]);
    const withDoi = readPaper(
      report.text,
      report.pages,
      { Subject: 'doi:10.1234/abc.5678' },
      { title: 'R', year: 2020 },
    );
    assert.equal(withDoi.paper?.doi, '10.1234/abc.5678');
    assert.equal(withDoi.paper?.title, 'Quarterly report');
    assert.equal(withDoi.paper?.year, 2020, 'the PDF date when nothing else gives a year');
  });
});
