import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashTags, maskCode, markdownHeadings, wikiLinks } from '@memex/markdown';
import { parseDoc } from '../testing/parse.js';
import type { MarkdownFields } from '../handler.js';

const note = [
  '---',
  'title: Trip planning',
  'date: 2024-03-05',
  'tags: [travel, "#Japan"]',
  'aliases:',
  '  - Kyoto trip',
  '---',
  '# Kyoto in spring',
  '',
  'Book the [[Ryokan list|ryokan]] and read [[Kyoto#Temples]] and [[Budget 2024#Food|food budget]].',
  'Pictures: ![[sakura.jpg]] #photos #travel/asia, see issue #42 and https://example.com/page#anchor or mail#not.',
  '',
  '## Packing #not-a-heading-tag-start',
  '',
  '```js',
  'const x = "[[Not a link]]"; // #notatag',
  '```',
  '',
  'Inline `[[code link]] #codetag` stays out, ~~~ is not a fence here.',
  '',
  '<!-- [[commented]] #hidden -->',
  '',
  '| a | [[Table target\\|shown]] |',
  '',
  'Setext title',
  '============',
].join('\n');

async function parse(
  source: string,
): Promise<{ text: string; title: string; occurredAt: string | null; warnings: string[]; fields: MarkdownFields }> {
  const item = await parseDoc('text/markdown', source);
  assert.equal(item.meta.format, 'markdown');
  return { ...item, fields: item.meta as MarkdownFields };
}

describe('markdown', () => {
  it('keeps front matter as metadata, its values searchable in lines before the text (issue 11: they were not)', async () => {
    const { fields, text, title, occurredAt } = await parse(note);
    assert.deepEqual(fields.frontMatter, {
      title: 'Trip planning',
      date: '2024-03-05',
      tags: ['travel', '#Japan'],
      aliases: ['Kyoto trip'],
    });
    assert.equal(title, 'Trip planning');
    assert.equal(occurredAt, '2024-03-05T00:00:00.000Z');
    assert.ok(
      text.startsWith(
        'title: Trip planning\ndate: 2024-03-05\ntags: travel, #Japan\naliases: Kyoto trip\n\n# Kyoto in spring',
      ),
    );
    assert.doesNotMatch(text, /^---/m);
  });

  it('takes [[links]] in front matter values as links, quoted or not (Obsidian properties)', async () => {
    const { fields } = await parse(
      '---\nup: "[[Home]]"\nrelated:\n  - "[[Alpha|a]]"\n  - [[Beta]]\nstatus: draft\n---\nBody [[Gamma]]\n',
    );
    assert.deepEqual(
      fields.links.map((l) => [l.target, l.alias]),
      [
        ['Home', null],
        ['Alpha', 'a'],
        ['Beta', null],
        ['Gamma', null],
      ],
    );
  });

  it('extracts [[wiki links]] with aliases, headings and embeds, but not from code or comments', async () => {
    const { fields } = await parse(note);
    assert.deepEqual(fields.links, [
      { target: 'Ryokan list', heading: null, alias: 'ryokan', embed: false },
      { target: 'Kyoto', heading: 'Temples', alias: null, embed: false },
      { target: 'Budget 2024', heading: 'Food', alias: 'food budget', embed: false },
      { target: 'sakura.jpg', heading: null, alias: null, embed: true },
      { target: 'Table target', heading: null, alias: 'shown', embed: false },
    ]);
  });

  it('extracts #tags (front matter ones first), not headings, numbers, URL fragments or code', async () => {
    const { fields } = await parse(note);
    assert.deepEqual(fields.tags, ['travel', 'Japan', 'photos', 'travel/asia', 'not-a-heading-tag-start']);
  });

  it('lists ATX and setext headings; the first H1 is the title without front matter', async () => {
    const { fields } = await parse(note);
    assert.deepEqual(fields.headings, ['Kyoto in spring', 'Packing #not-a-heading-tag-start', 'Setext title']);
    assert.equal((await parse('Intro line\n\n# Real title\n')).title, 'Real title');
    assert.equal((await parse('no headings at all\nsecond line')).title, 'no headings at all');
  });

  it('keeps a document whose front matter is broken, saying so', async () => {
    const broken = await parse('---\ntitle: [unclosed\n---\nBody #tag\n');
    assert.equal(broken.fields.frontMatter, null);
    assert.match(broken.warnings[0] ?? '', /^front matter is not valid YAML/);
    assert.deepEqual(broken.fields.tags, ['tag']);
    const scalar = await parse('---\njust a string\n---\nBody\n');
    assert.equal(scalar.fields.frontMatter, null);
    assert.equal(scalar.text, 'Body');
    const empty = await parse('---\n---\nBody\n');
    assert.equal(empty.text, 'Body');
  });

  it('helpers: code masking keeps offsets; tag and link edge cases', () => {
    const masked = maskCode('a `b` c\n```\n#x\n```\nd');
    assert.equal(masked.length, 'a `b` c\n```\n#x\n```\nd'.length);
    assert.doesNotMatch(masked, /#x|`b`/);
    assert.deepEqual(hashTags('#start (#paren) x#no #_ #123 #1a #ünïcödé #trailing-'), [
      'start',
      'paren',
      '1a',
      'ünïcödé',
      'trailing',
    ]);
    assert.deepEqual(wikiLinks('[[#Local heading]]'), [
      { target: '', heading: 'Local heading', alias: null, embed: false },
    ]);
    assert.deepEqual(markdownHeadings('#tag line\n#   \n# Real #'), [{ level: 1, text: 'Real' }]);
  });
});
