import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp, { type Sharp } from 'sharp';

/**
 * The faces test set, made at test time from public-domain portraits that Debian ships (nothing
 * of it is in the repository):
 * - Eileen Collins, NASA astronaut (NASA photo, public domain): scikit-image's `astronaut.png`,
 *   Debian package python3-skimage.
 * - Grace Hopper (U.S. Navy photo, public domain): matplotlib's `grace_hopper.jpg`, Debian
 *   package python-matplotlib-data.
 * Several photos of each person come from real transformations of the one portrait (a crop and
 * scale, a turn of a few degrees, darker light with a low-quality JPEG, a mirror image, the
 * person small on a larger canvas), plus two-person composites; the images with no face are
 * scikit-image's coffee cup, rocket, brick wall, Hubble deep field and its cat (Chelsea), to
 * count false positives. Honest limit: one source portrait per person, so the set measures
 * robustness to these transformations, not to different days, ages or poses.
 */
export const FACE_SOURCES = {
  collins: '/usr/lib/python3/dist-packages/skimage/data/astronaut.png',
  hopper: '/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg',
} as const;
export type Person = keyof typeof FACE_SOURCES;

const SKIMAGE = '/usr/lib/python3/dist-packages/skimage/data';
/** Images without a human face (the cat's face is a known trap for face detectors). */
export const NO_FACE_IMAGES = ['coffee.png', 'rocket.jpg', 'brick.png', 'hubble_deep_field.jpg', 'chelsea.png'].map(
  (name) => `${SKIMAGE}/${name}`,
);

/** Why the faces test set cannot be made here, or false. */
export function faceTestSetSkip(): string | false {
  for (const file of [...Object.values(FACE_SOURCES), ...NO_FACE_IMAGES])
    if (!fs.existsSync(file))
      return `needs ${file} (apt-get install python3-skimage python-matplotlib-data; deploy/local/provision.sh --with-media)`;
  return false;
}

/** A test photo and who is in it, left to right (the horizontal band each face's centre falls in). */
export interface TestPhoto {
  name: string;
  jpeg: Buffer;
  people: Array<{ person: Person; from: number; to: number }>;
}

async function jpeg(image: Sharp, quality = 90): Promise<Buffer> {
  return image.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
}

/** Six photos of one person made from their portrait by real transformations. */
async function variants(person: Person): Promise<TestPhoto[]> {
  const source = await sharp(FACE_SOURCES[person]).removeAlpha().png().toBuffer();
  const { width, height } = await sharp(source).metadata();
  const whole = [{ person, from: 0, to: 1 }];
  const made: Array<[string, Promise<Buffer>]> = [
    ['as is', jpeg(sharp(source))],
    [
      'cropped and scaled',
      jpeg(
        sharp(source)
          .extract({
            left: Math.round(width! * 0.1),
            top: 0,
            width: Math.round(width! * 0.8),
            height: Math.round(height! * 0.8),
          })
          .resize({ width: 360 }),
      ),
    ],
    ['turned 6 degrees', jpeg(sharp(source).rotate(6, { background: '#ffffff' }))],
    ['darker, low-quality JPEG', jpeg(sharp(source).modulate({ brightness: 0.6 }).gamma(1.4), 40)],
    ['mirrored', jpeg(sharp(source).flop())],
    [
      'small on a large canvas',
      sharp(source)
        .resize({ width: Math.round(width! * 0.6) })
        .toBuffer()
        .then((small) =>
          jpeg(
            sharp({ create: { width: 1400, height: 1000, channels: 3, background: '#8a9a7b' } }).composite([
              { input: small, left: 500, top: 300 },
            ]),
          ),
        ),
    ],
  ];
  const photos: TestPhoto[] = [];
  for (const [what, image] of made) photos.push({ name: `${person}, ${what}`, jpeg: await image, people: whole });
  return photos;
}

/** Both people side by side on one canvas (and mirrored: the other way round). */
async function together(leftPerson: Person, rightPerson: Person): Promise<TestPhoto> {
  const side = 500;
  const tile = async (person: Person) =>
    sharp(FACE_SOURCES[person])
      .removeAlpha()
      .resize({ width: side, height: side, fit: 'cover', position: 'top' })
      .toBuffer();
  const image = sharp({ create: { width: side * 2, height: side, channels: 3, background: '#ffffff' } }).composite([
    { input: await tile(leftPerson), left: 0, top: 0 },
    { input: await tile(rightPerson), left: side, top: 0 },
  ]);
  return {
    name: `${leftPerson} and ${rightPerson}`,
    jpeg: await jpeg(image, 85),
    people: [
      { person: leftPerson, from: 0, to: 0.5 },
      { person: rightPerson, from: 0.5, to: 1 },
    ],
  };
}

/** The whole set: 6 photos of each person, 2 of both, and the images with no face. */
export async function faceTestSet(): Promise<TestPhoto[]> {
  return [
    ...(await variants('collins')),
    ...(await variants('hopper')),
    await together('collins', 'hopper'),
    await together('hopper', 'collins'),
    ...(await Promise.all(
      NO_FACE_IMAGES.map(async (file) => ({ name: file.split('/').pop()!, jpeg: await jpeg(sharp(file)), people: [] })),
    )),
  ];
}

/** An MP4 showing each image for `seconds` in turn (512×512, 10 frames a second), made with ffmpeg. */
export async function slideshow(images: Buffer[], seconds: number): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-slideshow-'));
  try {
    const inputs = images.flatMap((image, i) => {
      const file = path.join(dir, `${i}.jpg`);
      fs.writeFileSync(file, image);
      return ['-loop', '1', '-t', String(seconds), '-i', file];
    });
    const scaled = images.map((_, i) => `[${i}:v]scale=512:512,setsar=1,fps=10[v${i}]`).join(';');
    const joined = `${images.map((_, i) => `[v${i}]`).join('')}concat=n=${images.length}:v=1[out]`;
    const output = path.join(dir, 'slideshow.mp4');
    await promisify(execFile)('ffmpeg', [
      '-v',
      'error',
      ...inputs,
      '-filter_complex',
      `${scaled};${joined}`,
      '-map',
      '[out]',
      '-pix_fmt',
      'yuv420p',
      output,
    ]);
    return fs.readFileSync(output);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
