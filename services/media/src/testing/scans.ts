import sharp from 'sharp';
import { seededRandom } from '@memex/testing';

/** Text drawn as an SVG over a background (DejaVu Sans, which Debian's fontconfig has). */
function svg(
  width: number,
  height: number,
  background: string,
  lines: Array<{ text: string; size: number; y: number }>,
  color: string,
): Buffer {
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const texts = lines
    .map(
      (l) =>
        `<text x="${Math.round(l.size * 0.8)}" y="${l.y}" font-family="DejaVu Sans" font-size="${l.size}" fill="${color}">${escape(l.text)}</text>`,
    )
    .join('');
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${background}"/>${texts}</svg>`,
  );
}

/** Grey noise added to an image: a scanner's dust, a phone camera's grain. */
async function noisy(image: Buffer, amount: number, seed: number): Promise<Buffer> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const random = seededRandom(seed);
  for (let i = 0; i < data.length; i++)
    data[i] = Math.max(0, Math.min(255, data[i]! + Math.round((random() - 0.5) * 2 * amount)));
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
    .png()
    .toBuffer();
}

/** A street sign photographed a little askew: white letters on green, turned 4°, grainy, a JPEG. */
export async function photographedSign(lines: string[]): Promise<Buffer> {
  const drawn = svg(
    1000,
    200 + lines.length * 110,
    '#1d6b33',
    lines.map((text, i) => ({ text, size: 76, y: 150 + i * 110 })),
    'white',
  );
  const turned = await sharp(drawn).rotate(4, { background: '#8a8f96' }).png().toBuffer();
  return sharp(await noisy(turned, 25, 7))
    .jpeg({ quality: 70 })
    .toBuffer();
}

/** A printed page as a scanner sees it: black text on off-white at 150 dpi, turned 1°, speckled, a JPEG. */
export async function scannedPage(lines: string[]): Promise<Buffer> {
  const drawn = svg(
    1240,
    1754,
    '#f4f1ea',
    lines.map((text, i) => ({ text, size: 30, y: 160 + i * 52 })),
    '#111',
  );
  const turned = await sharp(drawn).rotate(1, { background: '#f4f1ea' }).png().toBuffer();
  return sharp(await noisy(turned, 30, 11))
    .toColourspace('b-w')
    .jpeg({ quality: 75 })
    .toBuffer();
}

/**
 * A one-page PDF holding only a JPEG image (no text layer), as a scanner writes it: the page
 * is the image's size at 150 dpi, the image drawn over the whole page.
 */
export async function imageOnlyPdf(jpeg: Buffer): Promise<Buffer> {
  const { width, height, channels } = await sharp(jpeg).metadata();
  const points = (px: number) => ((px * 72) / 150).toFixed(2);
  const content = `q ${points(width!)} 0 0 ${points(height!)} 0 0 cm /Scan Do Q`;
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${points(width!)} ${points(height!)}] /Resources << /XObject << /Scan 4 0 R >> >> /Contents 5 0 R >>`,
    ),
    Buffer.concat([
      Buffer.from(
        `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /${channels === 1 ? 'DeviceGray' : 'DeviceRGB'} /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
      ),
      jpeg,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  objects.forEach((body, i) => {
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    offsets.push(at);
    parts.push(object);
    at += object.length;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `),
  ].join('\n');
  parts.push(Buffer.from(`${xref}\ntrailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** 1 − (edit distance / length of the truth), over whitespace-normalised, case-folded text. */
export function characterAccuracy(read: string, truth: string): number {
  const a = read.replace(/\s+/g, ' ').trim().toLowerCase();
  const b = truth.replace(/\s+/g, ' ').trim().toLowerCase();
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return Math.max(0, 1 - previous[b.length]! / b.length);
}
