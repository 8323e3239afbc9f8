export { PAPER_RULES, readPaper, type PaperReading } from './paper-reading.js';
export { normalizeTitle } from './text.js';
