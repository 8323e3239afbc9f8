/**
 * Binary property lists (`bplist00`) written as CoreFoundation writes them, for tests: objects in
 * a flat list, each starting with its marker byte, an offset table, and the trailer naming the
 * top object. Values: dicts (plain objects), arrays, strings (ASCII, else UTF-16), integers,
 * booleans, data (Buffers).
 */
export function binaryPlist(top: unknown): Buffer {
  const objects: Buffer[] = [];
  const REF = 2;
  const ref = (index: number) => {
    const bytes = Buffer.alloc(REF);
    bytes.writeUInt16BE(index);
    return bytes;
  };
  /** A marker with its size: in the low nibble, or (15 and over) as the integer object after it. */
  const head = (kind: number, size: number) => {
    if (size < 15) return Buffer.from([(kind << 4) | size]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(size);
    return Buffer.concat([Buffer.from([(kind << 4) | 0x0f, 0x12]), length]);
  };
  const add = (value: unknown): number => {
    const index = objects.length;
    objects.push(Buffer.alloc(0));
    let encoded: Buffer;
    if (Buffer.isBuffer(value)) encoded = Buffer.concat([head(0x4, value.length), value]);
    else if (typeof value === 'string') {
      const ascii = /^[\x00-\x7f]*$/.test(value);
      const bytes = ascii ? Buffer.from(value, 'latin1') : Buffer.from(value, 'utf16le').swap16();
      encoded = Buffer.concat([head(ascii ? 0x5 : 0x6, value.length), bytes]);
    } else if (typeof value === 'boolean') encoded = Buffer.from([value ? 0x09 : 0x08]);
    else if (typeof value === 'number') {
      encoded = Buffer.alloc(9);
      encoded[0] = 0x13;
      encoded.writeBigInt64BE(BigInt(value), 1);
    } else if (Array.isArray(value)) {
      const refs = value.map(add);
      encoded = Buffer.concat([head(0xa, refs.length), ...refs.map(ref)]);
    } else {
      const entries = Object.entries(value as Record<string, unknown>);
      const keys = entries.map(([key]) => add(key));
      const values = entries.map(([, entry]) => add(entry));
      encoded = Buffer.concat([head(0xd, entries.length), ...keys.map(ref), ...values.map(ref)]);
    }
    objects[index] = encoded;
    return index;
  };
  add(top);
  const offsets: number[] = [];
  let at = 8;
  for (const object of objects) {
    offsets.push(at);
    at += object.length;
  }
  const table = Buffer.alloc(offsets.length * 4);
  offsets.forEach((offset, i) => table.writeUInt32BE(offset, i * 4));
  const trailer = Buffer.alloc(32);
  trailer[6] = 4;
  trailer[7] = REF;
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(at), 24);
  return Buffer.concat([Buffer.from('bplist00', 'latin1'), ...objects, table, trailer]);
}

/** A Safari web archive of a page: its HTML, address and encoding, and an image beside it. */
export function webArchive(page: { html: string | Buffer; url: string; encoding?: string; type?: string }): Buffer {
  return binaryPlist({
    WebMainResource: {
      WebResourceData: Buffer.isBuffer(page.html) ? page.html : Buffer.from(page.html),
      WebResourceFrameName: '',
      WebResourceMIMEType: page.type ?? 'text/html',
      WebResourceTextEncodingName: page.encoding ?? 'UTF-8',
      WebResourceURL: page.url,
    },
    WebSubresources: [
      {
        WebResourceData: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
        WebResourceMIMEType: 'image/png',
        WebResourceURL: new URL('logo.png', page.url).href,
      },
    ],
  });
}
