import { DOMParser } from 'linkedom';

/**
 * Word's equations (Office Math Markup, `m:oMath`) as LaTeX text. mammoth has no equations in its
 * document model and drops them, so "For m = 1, the angle is …" came out as "For , the angle is .":
 * before mammoth reads the file, each equation in the body becomes a run of text, `$…$` in a line
 * or `$$…$$` as a paragraph of its own, as markitdown and pandoc write them.
 */

/** The n-ary operators LaTeX names; any other is written as the character itself. */
const NARY: Readonly<Record<string, string>> = {
  '∑': '\\sum',
  '∏': '\\prod',
  '∐': '\\coprod',
  '∫': '\\int',
  '∬': '\\iint',
  '∭': '\\iiint',
  '∮': '\\oint',
  '⋃': '\\bigcup',
  '⋂': '\\bigcap',
};

/** Accents by their combining character (`m:accPr/m:chr`); a hat when none is given. */
const ACCENTS: Readonly<Record<string, string>> = {
  '\u0302': '\\hat',
  '\u0303': '\\tilde',
  '\u0307': '\\dot',
  '\u0308': '\\ddot',
  '\u0305': '\\bar',
  '\u0304': '\\bar',
  '\u20d7': '\\vec',
  '\u0306': '\\breve',
  '\u030c': '\\check',
};

/** What is read of linkedom's XML elements. */
interface Node {
  readonly tagName: string;
  readonly children: Iterable<Node>;
  readonly firstElementChild: Node | null;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}

const MATH_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/math';
const WORD_NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

const nameOf = (node: Node) => node.tagName.slice(node.tagName.indexOf(':') + 1);
const childrenOf = (node: Node | undefined): Node[] => (node ? [...node.children] : []);
const child = (node: Node, name: string) => childrenOf(node).find((c) => nameOf(c) === name);
/** A property's `m:val` (`m:dPr/m:begChr`, `m:naryPr/m:chr`), or undefined when it is not set. */
const property = (node: Node, props: string, name: string): string | undefined => {
  const holder = child(node, props);
  const setting = holder && child(holder, name);
  return setting?.getAttribute('m:val') ?? undefined;
};
const group = (text: string) => `{${text}}`;

/** One OMML element as LaTeX. */
function latex(node: Node | undefined): string {
  if (!node) return '';
  const inner = (name: string) => latex(child(node, name));
  switch (nameOf(node)) {
    case 'r':
      // Text runs; U+2061 (function application) is invisible glue Word puts after `sin`.
      return childrenOf(node)
        .filter((c) => nameOf(c) === 't')
        .map((t) => (t.textContent ?? '').replace(/[\u2061-\u2064]/g, ''))
        .join('');
    case 'f':
      return `\\frac${group(inner('num'))}${group(inner('den'))}`;
    case 'sSup':
      return `${group(inner('e'))}^${group(inner('sup'))}`;
    case 'sSub':
      return `${group(inner('e'))}_${group(inner('sub'))}`;
    case 'sSubSup':
      return `${group(inner('e'))}_${group(inner('sub'))}^${group(inner('sup'))}`;
    case 'sPre':
      return `{}_${group(inner('sub'))}^${group(inner('sup'))}${group(inner('e'))}`;
    case 'rad': {
      const degree = property(node, 'radPr', 'degHide') === '1' ? '' : inner('deg');
      return `\\sqrt${degree ? `[${degree}]` : ''}${group(inner('e'))}`;
    }
    case 'd': {
      const open = property(node, 'dPr', 'begChr') ?? '(';
      const close = property(node, 'dPr', 'endChr') ?? ')';
      const separator = property(node, 'dPr', 'sepChr') ?? '|';
      const parts = childrenOf(node).filter((c) => nameOf(c) === 'e');
      return `${open}${parts.map(latex).join(separator)}${close}`;
    }
    case 'nary': {
      const operator = property(node, 'naryPr', 'chr') ?? '∫';
      const sub = inner('sub');
      const sup = inner('sup');
      return `${NARY[operator] ?? operator}${sub ? `_${group(sub)}` : ''}${sup ? `^${group(sup)}` : ''}${group(inner('e'))}`;
    }
    case 'func':
      return `${inner('fName')} ${inner('e')}`;
    case 'acc':
      return `${ACCENTS[property(node, 'accPr', 'chr') ?? '\u0302'] ?? '\\hat'}${group(inner('e'))}`;
    case 'bar':
      return `${property(node, 'barPr', 'pos') === 'bot' ? '\\underline' : '\\overline'}${group(inner('e'))}`;
    case 'limLow':
      return `${inner('e')}_${group(inner('lim'))}`;
    case 'limUpp':
      return `${inner('e')}^${group(inner('lim'))}`;
    case 'eqArr':
      return childrenOf(node)
        .filter((c) => nameOf(c) === 'e')
        .map(latex)
        .join(' \\\\ ');
    case 'm': {
      const rows = childrenOf(node)
        .filter((c) => nameOf(c) === 'mr')
        .map((row) =>
          childrenOf(row)
            .filter((c) => nameOf(c) === 'e')
            .map(latex)
            .join(' & '),
        );
      return `\\begin{matrix}${rows.join(' \\\\ ')}\\end{matrix}`;
    }
    default:
      // Properties are no content; anything else (e, num, oMath, box, groupChr…) is its children.
      return nameOf(node).endsWith('Pr') ? '' : childrenOf(node).map(latex).join('');
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An equation (`m:oMath`) or a paragraph of them (`m:oMathPara`) as LaTeX; null when it holds none. */
function equationText(xml: string, display: boolean): string | null {
  // The fragment with the prefixes it uses declared, as in the document around it.
  const wrapped = `<root xmlns:m="${MATH_NS}" xmlns:w="${WORD_NS}">${xml}</root>`;
  const root = new DOMParser().parseFromString(wrapped, 'text/xml').documentElement as unknown as Node;
  const top = root.firstElementChild;
  if (!top) return null;
  const equations = nameOf(top) === 'oMath' ? [top] : childrenOf(top);
  const body = equations
    .filter((e) => nameOf(e) === 'oMath')
    .map(latex)
    .join(' \\\\ ')
    .trim();
  if (!body) return null;
  return display ? `$$${body}$$` : `$${body}$`;
}

/** A body's equations replaced by runs of their LaTeX (paragraphs of them first: they hold equations). */
export function equationsAsText(documentXml: string): string {
  const run = (text: string | null) => (text ? `<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r>` : '');
  return documentXml
    .replace(/<m:oMathPara\b[\s\S]*?<\/m:oMathPara>/g, (para) => run(equationText(para, true)))
    .replace(/<m:oMath\b[\s\S]*?<\/m:oMath>/g, (math) => run(equationText(math, false)));
}
