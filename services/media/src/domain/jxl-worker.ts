/** The JPEG XL decoder's worker (renditions.ts): decodes one JPEG XL image per task to a PNG. */
import { readFileSync } from 'node:fs';
import { initSync, JxlImage } from 'jxl-oxide-wasm';

// jxl-oxide (a JPEG XL decoder written in Rust) compiled to WebAssembly, its module from the package.
initSync({ module: readFileSync(new URL(import.meta.resolve('jxl-oxide-wasm/module.wasm'))) });

/**
 * The image upright (the codestream's orientation applied) in sRGB, as a PNG; an animation's first
 * frame. A file that ends before its first frame does is refused: jxl-oxide would render what it
 * has, the rest blank.
 */
export default function decodeJxl(bytes: Uint8Array): Uint8Array {
  const image = new JxlImage();
  try {
    image.forceSrgb = true;
    image.feedBytes(bytes);
    if (!image.tryInit()) throw new Error('the file ends before its image header');
    if (image.numLoadedKeyframes === 0) throw new Error('the file is cut short: it ends inside its image data');
    // encodeToPng consumes the rendered frame (frees it).
    return image.render(0).encodeToPng();
  } finally {
    image.free();
  }
}
