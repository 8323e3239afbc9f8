export { MediaModule, type MediaOptions } from './media.module.js';
export { PlaceIndex } from './domain/places.js';
export { makeRenditions, NoRendition, RENDITION_SIZES } from './domain/renditions.js';
