import path from 'node:path';
import { collapseWhitespace } from '../text.js';
import { decodeEntities, firstElement } from './xml-text.js';

/**
 * Office charts (DrawingML, `c:chartSpace`) as text, wherever an OOXML file draws them: a
 * PowerPoint slide, a Word body, an Excel sheet's drawing. A chart's part is found through the
 * relationships of the part that draws it (`<c:chart r:id>`).
 */

/** A part of the zip by name, as XML; undefined when it is not there (or past the reader's limit). */
export type PartReader = (name: string) => Promise<string | undefined>;

/** A part's relationships (`_rels/<name>.rels`): id to the part it points at, resolved against the part's folder. */
export async function relationships(read: PartReader, from: string): Promise<Map<string, string>> {
  const rels = (await read(from.replace(/([^/]+)$/, '_rels/$1.rels'))) ?? '';
  const targets = new Map<string, string>();
  for (const [, attributes] of rels.matchAll(/<Relationship\b([^>]*?)\/?>/g)) {
    const id = /\bId="([^"]+)"/.exec(attributes!)?.[1];
    const target = decodeEntities(/\bTarget="([^"]+)"/.exec(attributes!)?.[1] ?? '');
    // An external target (a linked workbook, a web address) is no part of this file.
    if (!id || !target || /\bTargetMode="External"/.test(attributes!)) continue;
    targets.set(
      id,
      target.startsWith('/')
        ? target.slice(1)
        : path.posix.normalize(path.posix.join(path.posix.dirname(from), target)),
    );
  }
  return targets;
}

/** The ids of the charts a part's XML draws (`<c:chart r:id>`), in order. */
export const chartIds = (xml: string): string[] =>
  [...xml.matchAll(/<c:chart\b[^>]*\br:id="([^"]+)"/g)].map((m) => m[1]!);

/** The text of each chart a part draws, by its relationship id (a chart with no text, or missing, is left out). */
export async function chartsOf(read: PartReader, from: string, xml: string): Promise<Map<string, string>> {
  const ids = chartIds(xml);
  const texts = new Map<string, string>();
  if (ids.length === 0) return texts;
  const targets = await relationships(read, from);
  for (const id of ids) {
    const target = targets.get(id);
    const chart = target ? await read(target) : undefined;
    const text = chart ? chartText(chart) : '';
    if (text) texts.set(id, text);
  }
  return texts;
}

/**
 * A chart as text: its title, then a row per category with each series' value under the series'
 * names (the numbers a chart shows are what it says).
 */
export function chartText(xml: string): string {
  const values = (fragment: string | undefined) =>
    [...(fragment ?? '').matchAll(/<c:pt\b[^>]*>[\s\S]*?<c:v>([\s\S]*?)<\/c:v>/g)].map((m) =>
      decodeEntities(m[1]!).trim(),
    );
  const title = collapseWhitespace(
    [...(firstElement(xml, 'c:title') ?? '').matchAll(/<a:t(?:\s[^>]*)?>([\s\S]*?)<\/a:t>/g)]
      .map((m) => decodeEntities(m[1]!))
      .join(''),
  );
  const series = [...xml.matchAll(/<c:ser>([\s\S]*?)<\/c:ser>/g)].map((m) => {
    const ser = m[1]!;
    const name = decodeEntities(/<c:v>([\s\S]*?)<\/c:v>/.exec(firstElement(ser, 'c:tx') ?? '')?.[1] ?? '').trim();
    // A scatter chart's points are x and y values.
    return {
      name,
      categories: values(firstElement(ser, 'c:cat') ?? firstElement(ser, 'c:xVal')),
      values: values(firstElement(ser, 'c:val') ?? firstElement(ser, 'c:yVal')),
    };
  });
  const categories = series.find((s) => s.categories.length > 0)?.categories ?? [];
  const rows = Math.max(categories.length, ...series.map((s) => s.values.length));
  const lines = [title];
  if (series.length > 0) lines.push(['', ...series.map((s) => s.name)].join('\t').trimEnd());
  for (let i = 0; i < rows; i++) lines.push([categories[i] ?? '', ...series.map((s) => s.values[i] ?? '')].join('\t'));
  return lines.filter((line) => line.trim()).join('\n');
}

/**
 * An OpenDocument chart object's `content.xml` as text, as an OOXML chart's: its title, then its
 * own data table (the series' names, then a row per category); empty for an object that is no chart.
 */
export function odfChartText(xml: string): string {
  if (!xml.includes('<office:chart')) return '';
  const textOf = (fragment: string) =>
    collapseWhitespace(decodeEntities(fragment.replace(/<\/text:p>/g, ' ').replace(/<[^>]+>/g, '')));
  const title = textOf(firstElement(xml, 'chart:title') ?? '');
  const table = /<table:table[\s>][\s\S]*?<\/table:table>/.exec(xml)?.[0] ?? '';
  const rows = [...table.matchAll(/<table:table-row\b[^>]*>([\s\S]*?)<\/table:table-row>/g)].map(([, row]) =>
    [...row!.matchAll(/<table:table-cell\b[^>]*?(?:\/>|>([\s\S]*?)<\/table:table-cell>)/g)]
      .map(([, cell = '']) => textOf(cell))
      .join('\t')
      .trimEnd(),
  );
  return [title, ...rows].filter((line) => line.trim()).join('\n');
}
