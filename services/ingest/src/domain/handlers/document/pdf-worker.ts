/** The PDF reader's worker (pdf.ts): extracts one PDF per task. */
import { extractPdf, type PdfExtraction } from './pdf-extract.js';

// pdf.js rejects some internal promises nobody awaits when a file is damaged (the extraction
// itself still settles). In this thread they are noise; in the service's thread they would
// terminate the process.
process.on('unhandledRejection', () => {});

export default function readPdf(data: Uint8Array): Promise<PdfExtraction> {
  return extractPdf(data);
}
