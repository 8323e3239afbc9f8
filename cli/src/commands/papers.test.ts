import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EntityGet, ResultOf } from '@memex/contracts';
import { paperLines } from './papers.js';

type Card = ResultOf<typeof EntityGet>;

const thing = (key: string, name: string) => ({ entity: { id: 1, key, kind: key.split(':')[0]!, name } });
function fact(
  rel: string,
  direction: 'in' | 'out',
  other: ReturnType<typeof thing>,
  quote: string | null = null,
  part: string | null = null,
) {
  return {
    link_id: `${rel}-${other.entity.key}`,
    rel,
    direction,
    other,
    basis: 'observed' as const,
    made_by: 'papers@1',
    confidence: 1,
    valid_from: null,
    valid_to: null,
    evidence: quote ? [{ item: 'x', part, quote }] : [],
    confirmed: false,
  };
}

test('a paper card: year, venue and ids, authors, what it cites (as written, with the page) and what cites it', () => {
  const card = {
    entity: {
      id: 1,
      key: 'paper:arxiv:2103.15348',
      kind: 'paper',
      name: 'LayoutParser',
      aliases: [],
      keys: [],
      attrs: { year: 2021, venue: 'arXiv (cs.CV)', arxiv: '2103.15348' },
    },
    facts: [
      fact('authored', 'in', thing('person:zejiang-shen', 'Zejiang Shen')),
      fact(
        'cites',
        'out',
        thing('paper:ref:2016:deep-residual-learning', 'Deep residual learning'),
        '[11] K. He et al., "Deep residual learning," 2016.',
        'page:15;chars:10-60',
      ),
      fact(
        'cites',
        'in',
        thing('paper:doi:10.1/x', 'A later paper'),
        'Shen et al. 2021. LayoutParser.',
        'page:9;chars:1-30',
      ),
      fact('works_at', 'out', thing('org:allenai.org', 'AI2')),
    ],
  } as unknown as Card;
  const { lines, rest } = paperLines(card);
  assert.deepEqual(lines, [
    '  2021 · arXiv (cs.CV) · arXiv:2103.15348',
    '  by Zejiang Shen',
    '  cites (1):',
    '    Deep residual learning (paper:ref:2016:deep-residual-learning)\n      “[11] K. He et al., "Deep residual learning," 2016.” p. 15',
    '  cited by (1):',
    '    A later paper (paper:doi:10.1/x)\n      “Shen et al. 2021. LayoutParser.” p. 9',
  ]);
  assert.deepEqual(
    rest.map((f) => f.rel),
    ['works_at'],
  );
});
