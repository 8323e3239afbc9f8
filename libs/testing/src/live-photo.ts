import { ffmpegFile } from './ffmpeg.js';

/**
 * An iPhone's EXIF, written into a JPEG for tests: Make and Model, the capture time with its
 * offset, and Apple's MakerNote carrying the content identifier a Live Photo's still shares with
 * its motion clip (tag 0x0011: exiftool's MediaGroupUUID, formerly ContentIdentifier). Laid out
 * as the phone does: a big-endian TIFF, the MakerNote "Apple iOS" with its own big-endian IFD
 * whose offsets count from the note's start.
 */
export interface IphoneExif {
  contentIdentifier: string;
  /** EXIF wall clock: `2023:07:14 18:30:05`. */
  takenAt: string;
  /** `+02:00`. */
  offset: string;
}

const ASCII = 2;
const LONG = 4;
const UNDEFINED = 7;
const SLONG = 9;

interface Entry {
  tag: number;
  type: number;
  value: Buffer;
}

const ascii = (text: string) => Buffer.from(`${text}\0`, 'latin1');

/** An IFD at `start` (offsets count from `base`), its entries sorted, values over 4 bytes after it. */
function ifd(entries: Entry[], start: number, base: number): Buffer {
  const sorted = [...entries].sort((a, b) => a.tag - b.tag);
  const head = Buffer.alloc(2 + sorted.length * 12 + 4);
  head.writeUInt16BE(sorted.length, 0);
  const data: Buffer[] = [];
  let dataAt = start + head.length;
  sorted.forEach(({ tag, type, value }, i) => {
    const at = 2 + i * 12;
    head.writeUInt16BE(tag, at);
    head.writeUInt16BE(type, at + 2);
    head.writeUInt32BE(type === SLONG || type === LONG ? value.length / 4 : value.length, at + 4);
    if (value.length <= 4) value.copy(head, at + 8);
    else {
      head.writeUInt32BE(dataAt - base, at + 8);
      const padded = value.length % 2 ? Buffer.concat([value, Buffer.alloc(1)]) : value;
      data.push(padded);
      dataAt += padded.length;
    }
  });
  return Buffer.concat([head, ...data]);
}

function long(value: number, type = LONG): Entry['value'] {
  const bytes = Buffer.alloc(4);
  if (type === SLONG) bytes.writeInt32BE(value);
  else bytes.writeUInt32BE(value);
  return bytes;
}

function appleMakerNote(contentIdentifier: string): Buffer {
  const header = Buffer.concat([
    Buffer.from('Apple iOS\0', 'latin1'),
    Buffer.from([0, 1]),
    Buffer.from('MM', 'latin1'),
  ]);
  return Buffer.concat([
    header,
    ifd(
      [
        { tag: 0x0001, type: SLONG, value: long(14, SLONG) },
        { tag: 0x0011, type: ASCII, value: ascii(contentIdentifier) },
      ],
      header.length,
      0,
    ),
  ]);
}

/** The JPEG with an APP1 Exif segment holding `exif` inserted after its SOI marker. */
export function withIphoneExif(jpeg: Buffer, exif: IphoneExif): Buffer {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('not a JPEG');
  const tiffHeader = Buffer.from([0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08]);
  const ifd0Entries = (exifAt: number): Entry[] => [
    { tag: 0x010f, type: ASCII, value: ascii('Apple') },
    { tag: 0x0110, type: ASCII, value: ascii('iPhone 12') },
    { tag: 0x8769, type: LONG, value: long(exifAt) },
  ];
  // IFD0's length does not depend on where the Exif IFD starts: lay it out once to know.
  const exifAt = 8 + ifd(ifd0Entries(0), 8, 0).length;
  const ifd0 = ifd(ifd0Entries(exifAt), 8, 0);
  const exifIfd = ifd(
    [
      { tag: 0x9003, type: ASCII, value: ascii(exif.takenAt) },
      { tag: 0x9011, type: ASCII, value: ascii(exif.offset) },
      { tag: 0x927c, type: UNDEFINED, value: appleMakerNote(exif.contentIdentifier) },
    ],
    exifAt,
    0,
  );
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiffHeader, ifd0, exifIfd]);
  const marker = Buffer.alloc(4);
  marker.writeUInt16BE(0xffe1, 0);
  marker.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), marker, payload, jpeg.subarray(2)]);
}

/**
 * A Live Photo's motion clip as an iPhone writes it: a second of QuickTime video whose metadata
 * keys (mdta) carry the content identifier and the creation date. Needs ffmpeg.
 */
export function motionClip(contentIdentifier: string, creationDate: string): Promise<Buffer> {
  return ffmpegFile('IMG_0001.MOV', [
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=1:size=64x48:rate=10',
    '-c:v',
    'mpeg4',
    '-metadata',
    `com.apple.quicktime.content.identifier=${contentIdentifier}`,
    '-metadata',
    `com.apple.quicktime.creationdate=${creationDate}`,
    '-movflags',
    'use_metadata_tags',
    '-f',
    'mov',
  ]);
}
