export { PAPER_RULES, readPaper, type PaperReading } from './paper-reading.js';
