import type { EntityGet, ResultOf } from '@memex/contracts';

type Card = ResultOf<typeof EntityGet>;
type Fact = Card['facts'][number];

/**
 * What `memex entity paper:…` adds for a paper: its year, venue and identifiers, the papers it
 * cites and those citing it (each with the reference as written and its page), and its authors;
 * the card's other facts follow as for any thing.
 */
export function paperLines(card: Card): { lines: string[]; rest: Fact[] } {
  const { attrs } = card.entity;
  const about = [
    attrs['year'],
    attrs['venue'],
    attrs['doi'] && `doi:${attrs['doi']}`,
    attrs['arxiv'] && `arXiv:${attrs['arxiv']}`,
  ]
    .filter(Boolean)
    .join(' · ');
  const name = (f: Fact) =>
    'entity' in f.other ? `${f.other.entity.name} (${f.other.entity.key})` : f.other.item.title;
  const where = (f: Fact) => {
    const evidence = f.evidence[0];
    const page = /page:(\d+)/.exec(evidence?.part ?? '')?.[1];
    return evidence?.quote ? `\n      “${evidence.quote}”${page ? ` p. ${page}` : ''}` : '';
  };
  const section = (title: string, facts: Fact[], withQuote: boolean) =>
    facts.length === 0
      ? []
      : [`  ${title} (${facts.length}):`, ...facts.map((f) => `    ${name(f)}${withQuote ? where(f) : ''}`)];
  const is = (rel: string, direction: Fact['direction']) => (f: Fact) => f.rel === rel && f.direction === direction;
  const authors = card.facts.filter(is('authored', 'in'));
  const cites = card.facts.filter(is('cites', 'out'));
  const citedBy = card.facts.filter(is('cites', 'in'));
  return {
    lines: [
      ...(about ? [`  ${about}`] : []),
      ...(authors.length
        ? [`  by ${authors.map((f) => ('entity' in f.other ? f.other.entity.name : '')).join(', ')}`]
        : []),
      ...section('cites', cites, true),
      ...section('cited by', citedBy, true),
    ],
    rest: card.facts.filter((f) => !authors.includes(f) && !cites.includes(f) && !citedBy.includes(f)),
  };
}
