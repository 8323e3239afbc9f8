export { MediaHarness } from './harness.js';
export { characterAccuracy, imageOnlyPdf, photographedSign, scannedPage } from './scans.js';
export { fakeTranscriber, recordingToolsSkip, spokenVideo, type FakeTranscriber } from './recordings.js';
