/**
 * A small structural reader of raw MIME, beside mailparser (which does the real decoding).
 * It answers what mailparser does not tell: where each header block is (to repair raw 8-bit
 * headers before parsing), whether a multipart body ever closed (truncation), which base64 parts
 * are invalid, and whether the bytes look like a message at all. It works on a latin1 view of the
 * bytes, so string offsets are byte offsets.
 */

export interface RawHeader {
  /** Lowercase field name. */
  name: string;
  /** The unfolded value, as latin1 (one char per byte). */
  value: string;
  /** Byte range of the value (after the colon, up to the end of its last folded line). */
  valueStart: number;
  valueEnd: number;
}

export interface MimeNode {
  headers: RawHeader[];
  /** Lowercase `type/subtype`; text/plain when absent (RFC 2045), message/rfc822 inside a digest. */
  contentType: string;
  /** Content-Type parameters, lowercase names, unquoted values. */
  params: Map<string, string>;
  transferEncoding: string;
  disposition: string | null;
  bodyStart: number;
  bodyEnd: number;
  children: MimeNode[];
  /** For a multipart: whether its closing delimiter (`--boundary--`) was found. */
  closed: boolean;
  /** Depth in the tree, the message itself being 0. */
  depth: number;
}

/** Deeper nesting than this is not walked (mailparser copes; we only stop looking for problems). */
const MAX_DEPTH = 50;

interface Line {
  start: number;
  /** End of the content, before CR LF. */
  end: number;
  /** Start of the next line. */
  next: number;
}

function readLine(s: string, at: number, limit: number): Line {
  let nl = s.indexOf('\n', at);
  if (nl === -1 || nl >= limit) nl = limit;
  const end = nl > at && s.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
  return { start: at, end, next: Math.min(nl + 1, limit) };
}

const HEADER_LINE = /^([\x21-\x39\x3b-\x7e]+)[ \t]*:/;

/** Reads the header block starting at `at`; returns the headers and where the body begins. */
export function readHeaders(s: string, at: number, limit: number): { headers: RawHeader[]; bodyStart: number } {
  const headers: RawHeader[] = [];
  let pos = at;
  while (pos < limit) {
    const line = readLine(s, pos, limit);
    if (line.end === line.start) return { headers, bodyStart: line.next };
    const text = s.slice(line.start, line.end);
    const folded = text.charCodeAt(0) === 0x20 || text.charCodeAt(0) === 0x09;
    const last = headers[headers.length - 1];
    const field = folded ? null : HEADER_LINE.exec(text);
    if (field?.[1]) {
      const valueStart = line.start + field[0].length;
      headers.push({
        name: field[1].toLowerCase(),
        value: s.slice(valueStart, line.end),
        valueStart,
        valueEnd: line.end,
      });
    } else if (last) {
      // A folded line, or a malformed line inside the header block: both continue the previous field.
      last.value += ` ${text.trim()}`;
      last.valueEnd = line.end;
    }
    pos = line.next;
  }
  return { headers, bodyStart: limit };
}

export function headerValue(headers: RawHeader[], name: string): string | null {
  return headers.find((h) => h.name === name)?.value ?? null;
}

/** Parses `type/subtype; a=b; c="d"` (values may be quoted; RFC 2231 continuations are left to mailparser). */
export function parseContentType(
  value: string | null,
  fallback: string,
): { type: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  if (value === null) return { type: fallback, params };
  const [head = '', ...rest] = splitParams(value);
  const type = head.trim().toLowerCase();
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name && !params.has(name)) params.set(name, v);
  }
  return { type: /^[^/\s]+\/[^/\s]+$/.test(type) ? type : fallback, params };
}

/** Splits on `;` outside double quotes. */
function splitParams(value: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && quoted && i + 1 < value.length) {
      cur += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function readNode(s: string, start: number, end: number, depth: number, defaultType: string): MimeNode {
  const { headers, bodyStart } = readHeaders(s, start, end);
  const { type, params } = parseContentType(headerValue(headers, 'content-type'), defaultType);
  const node: MimeNode = {
    headers,
    contentType: type,
    params,
    transferEncoding: (headerValue(headers, 'content-transfer-encoding') ?? '7bit').trim().toLowerCase(),
    disposition: headerValue(headers, 'content-disposition')?.split(';')[0]?.trim().toLowerCase() ?? null,
    bodyStart: Math.min(bodyStart, end),
    bodyEnd: end,
    children: [],
    closed: true,
    depth,
  };
  const boundary = params.get('boundary');
  if (type.startsWith('multipart/') && boundary && depth < MAX_DEPTH) {
    const childType = type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
    splitMultipart(s, node, boundary, childType);
  }
  return node;
}

function splitMultipart(s: string, node: MimeNode, boundary: string, childType: string): void {
  const delimiter = `--${boundary}`;
  let partStart = -1;
  let pos = node.bodyStart;
  node.closed = false;
  while (pos < node.bodyEnd) {
    const line = readLine(s, pos, node.bodyEnd);
    if (s.startsWith(delimiter, line.start)) {
      const rest = s.slice(line.start + delimiter.length, line.end);
      const closing = rest.startsWith('--');
      if (closing || rest.trim() === '') {
        // The CRLF before a delimiter belongs to the delimiter (RFC 2046).
        if (partStart !== -1)
          node.children.push(readNode(s, partStart, trimEol(s, partStart, line.start), node.depth + 1, childType));
        if (closing) {
          node.closed = true;
          return;
        }
        partStart = line.next;
      }
    }
    pos = line.next;
  }
  if (partStart !== -1) node.children.push(readNode(s, partStart, node.bodyEnd, node.depth + 1, childType));
}

function trimEol(s: string, min: number, at: number): number {
  let end = at;
  if (end > min && s.charCodeAt(end - 1) === 10) end--;
  if (end > min && s.charCodeAt(end - 1) === 13) end--;
  return end;
}

/** Walks the whole tree, depth first. */
export function* walk(node: MimeNode): Generator<MimeNode> {
  yield node;
  for (const child of node.children) yield* walk(child);
}

/** Reads the MIME structure of a whole message given as a latin1 string. */
export function readMessage(s: string): MimeNode {
  return readNode(s, 0, s.length, 0, 'text/plain');
}

/**
 * Bytes before the first header to skip, as found in real archives: a UTF-8 byte-order mark, lines
 * of only whitespace, and an mbox `From ` separator line that the importer left in.
 */
export function leadingJunkLength(s: string): number {
  let at = s.startsWith('\xef\xbb\xbf') ? 3 : 0;
  for (;;) {
    const line = readLine(s, at, s.length);
    if (line.next === at) return at;
    const text = s.slice(line.start, line.end);
    if (text.trim() === '' && line.end < s.length) at = line.next;
    else if (text.startsWith('From ')) return line.next;
    else return at;
  }
}

/** A part's body with its transfer encoding (base64, quoted-printable) undone. */
export function partBytes(raw: string, node: MimeNode): Buffer {
  const body = raw.slice(node.bodyStart, node.bodyEnd);
  if (node.transferEncoding === 'base64') return Buffer.from(body.replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
  if (node.transferEncoding === 'quoted-printable') {
    return Buffer.from(
      body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
  }
  return Buffer.from(body, 'latin1');
}
