export { MediaHarness } from './harness.js';
export { characterAccuracy, imageOnlyPdf, photographedSign, scannedPage } from './scans.js';
export { fakeTranscriber, recordingToolsSkip, spokenVideo, type FakeTranscriber } from './recordings.js';
export {
  faceTestSet,
  faceTestSetSkip,
  slideshow,
  FACE_SOURCES,
  NO_FACE_IMAGES,
  type Person,
  type TestPhoto,
} from './faces.js';
