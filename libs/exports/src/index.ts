/**
 * Reading what people export from other systems, without sending anything anywhere: mbox files,
 * folder trees, Google Takeout (mail with its Gmail labels, Google Photos with sidecars and
 * albums), Apple Photos exports (XMP sidecars, XMP/IPTC in files). The CLI's importers and the
 * sources service's export sources both read through these.
 */
export * from './mbox.js';
export * from './maildir.js';
export * from './outlook-mime.js';
export * from './pst.js';
export * from './folder.js';
export * from './takeout.js';
export * from './apple.js';
export * from './xmp.js';
export * from './photos.js';
export * from './takeout-export.js';
export { files, inArchive } from './files.js';
export { isGzip } from './gzip.js';
export { UnreadableZip, ZipArchives } from './zip.js';
export * from './keep.js';
export * from './apple-mail.js';
export * from './olm.js';
export * from './enex.js';
