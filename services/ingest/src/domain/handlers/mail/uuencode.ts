/** A file uuencoded into a message's text (`begin 644 name` … `end`), as mail before MIME sent them. */
export interface UuencodedFile {
  /** The name on its `begin` line, or null when the line gives none. */
  filename: string | null;
  bytes: Buffer;
  /** Set when the block ended before its `end` line or held a line that is not uuencoding: what decoded is kept. */
  problem: string | null;
}

const BEGIN = /^begin [0-7]{3,4}(?: (.*))?$/;

/**
 * The files uuencoded into a plain text, and the text without them: their lines are no words
 * anyone searches for (a 40 KB GIF is 55 KB of `M1TE&.#=A…`), and the files are attachments. A
 * block is taken only when its lines after `begin` are uuencoding, so a sentence starting
 * "begin 644" stays text.
 */
export function extractUuencoded(text: string): { text: string; files: UuencodedFile[] } {
  if (!text.includes('begin ')) return { text, files: [] };
  const lines = text.split(/\r?\n/);
  const kept: string[] = [];
  const files: UuencodedFile[] = [];
  for (let i = 0; i < lines.length; i++) {
    const begin = BEGIN.exec(lines[i]!.trimEnd());
    if (!begin || !isUuLine(lines[i + 1])) {
      kept.push(lines[i]!);
      continue;
    }
    const chunks: Buffer[] = [];
    let j = i + 1;
    let problem: string | null = null;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.trimEnd() === 'end') break;
      if (line.trimEnd() === '`' || line.trim() === '') continue; // the zero-length line before `end`
      const decoded = decodeUuLine(line);
      if (!decoded) {
        problem = `line ${j - i} of the block is not uuencoding`;
        break;
      }
      chunks.push(decoded);
    }
    if (j === lines.length && !problem) problem = 'it has no end line';
    files.push({ filename: begin[1]?.trim() || null, bytes: Buffer.concat(chunks), problem });
    // A broken line ends the block and stays text; a complete block goes whole, `end` included.
    i = problem && j < lines.length ? j - 1 : j;
  }
  return { text: kept.join('\n'), files };
}

/** Whether the line after a `begin` is uuencoding: it carries at least one group of four. */
function isUuLine(line: string | undefined): boolean {
  return line !== undefined && line.trimEnd().length >= 5 && decodeUuLine(line) !== null;
}

/**
 * One line's bytes: its first character says how many, each four characters after it carry
 * three. Spaces stripped from its end (zero sextets, which older encoders wrote as spaces and
 * transports trim) are put back; a character outside uuencoding's makes it no uuencoding (prose
 * has lowercase letters).
 */
function decodeUuLine(line: string): Buffer | null {
  const count = (line.charCodeAt(0) - 32) & 63;
  const needed = Math.ceil(count / 3) * 4;
  if (count === 0) return null;
  const body = line.slice(1, needed + 1).padEnd(needed, ' ');
  const out = Buffer.alloc((needed / 4) * 3);
  for (let c = 0, o = 0; c < needed; c += 4, o += 3) {
    const codes = [0, 1, 2, 3].map((k) => body.charCodeAt(c + k));
    if (codes.some((code) => code < 32 || code > 96)) return null;
    const [a, b, d, e] = codes.map((code) => (code - 32) & 63) as [number, number, number, number];
    out[o] = (a << 2) | (b >> 4);
    out[o + 1] = ((b & 15) << 4) | (d >> 2);
    out[o + 2] = ((d & 3) << 6) | e;
  }
  return out.subarray(0, count);
}
