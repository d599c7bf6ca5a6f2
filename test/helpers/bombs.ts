// Decompression bombs: small files that decode to tens of megapixels, each of a kind libvips decodes
// differently (docs/memory.md, "Decoding"). Made with sharp or by hand when a test starts; nothing is
// stored in the repo. Each takes 0.5–1.5 s to make.
import zlib from 'node:zlib';
import sharp from 'sharp';

/** A bomb, and what the service answers for it at `size=preview` (the decode budget decides). */
export interface Bomb {
  name: string;
  make(): Promise<Buffer>;
  /** 200, or 400 with this code. */
  expect: 200 | 'resolution_too_high';
}

const SIDE = 7000;

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/**
 * A 1-bit greyscale PNG (sharp writes 1 bit only with a palette): a checkerboard of 1000 px cells,
 * every row after the first filtered Up, so repeated rows are zeros that deflate to almost nothing
 * (7000x7000: 14 KB).
 */
export function png1BitGrey(width = SIDE, height = SIDE): Buffer {
  const stride = Math.ceil(width / 8) + 1;
  const row = (y: number) => {
    const r = Buffer.alloc(stride);
    for (let x = 0; x < width; x++) if (((Math.floor(x / 1000) + Math.floor(y / 1000)) & 1) === 1) r[1 + (x >> 3)]! |= 0x80 >> (x & 7);
    return r;
  };
  const rows = Buffer.alloc(stride * height);
  let prev = row(0);
  prev.copy(rows, 0);
  for (let y = 1; y < height; y++) {
    const cur = y % 1000 === 0 ? row(y) : prev;
    const off = y * stride;
    rows[off] = 2; // Up
    for (let i = 1; i < stride; i++) rows[off + i] = (cur[i]! - prev[i]!) & 0xff;
    prev = cur;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A two-colour checkerboard of 1000 px cells, side × side (made at 2x2 and scaled up). */
function checkerboard(side = SIDE) {
  return sharp(Buffer.from([0, 255, 255, 0]), { raw: { width: 2, height: 2, channels: 1 } }).resize(side, side, { kernel: 'nearest' });
}

/** The shapes the bomb tests send, 7000x7000 (49 MP, under the 50 MP cap) unless named otherwise. */
export const BOMBS: readonly Bomb[] = [
  { name: '1-bit greyscale PNG (14 KB)', make: async () => png1BitGrey(), expect: 200 },
  {
    name: '1-bit palette PNG, interlaced (26 KB)',
    // sharp writes 1-bit palettes (libvips' bitdepth) though its typings list the option for TIFF only.
    make: () =>
      checkerboard()
        .png({ palette: true, colours: 2, progressive: true, compressionLevel: 9, dither: 0, ...({ bitdepth: 1 } as object) })
        .toBuffer(),
    expect: 200,
  },
  {
    name: '16-bit RGBA PNG, interlaced (590 KB)',
    make: () =>
      sharp({ create: { width: SIDE, height: SIDE, channels: 4, background: { r: 128, g: 64, b: 32, alpha: 0.5 } } })
        .toColourspace('rgb16')
        .png({ compressionLevel: 9, progressive: true })
        .toBuffer(),
    expect: 'resolution_too_high',
  },
  { name: 'progressive JPEG (300 KB)', make: () => checkerboard().toColourspace('srgb').jpeg({ quality: 50, progressive: true }).toBuffer(), expect: 200 },
  { name: 'lossless WebP (2 KB)', make: () => checkerboard().toColourspace('srgb').webp({ lossless: true, effort: 0 }).toBuffer(), expect: 200 },
  {
    // 50 MP: the largest interlaced 8-bit RGBA PNG the budget takes at preview (~280 MB estimated).
    name: '8-bit RGBA PNG, interlaced, 7071x7071 (220 KB)',
    make: () =>
      sharp({ create: { width: 7071, height: 7071, channels: 4, background: '#80808080' } })
        .png({ compressionLevel: 9, progressive: true })
        .toBuffer(),
    expect: 200,
  },
];
