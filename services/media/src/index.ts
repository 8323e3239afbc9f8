export { MediaModule, type MediaOptions } from './media.module.js';
export { PlaceIndex } from './domain/places.js';
export { makeRenditions, NoRendition, RENDITION_SIZES } from './domain/renditions.js';
export { HumanFaceModel, InsightFaceModel, loadFaceModel, type FaceModel } from './domain/faces/index.js';
export { ObjectTagger } from './domain/tags/objects.js';
