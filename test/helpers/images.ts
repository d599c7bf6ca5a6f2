// Test images synthesised with sharp: nothing copied into the repository.

import sharp from 'sharp';

/** A w×h image: a dark square "subject" on a light background. */
export async function makeImage(format: 'png' | 'jpeg' | 'webp', width = 64, height = 48): Promise<Buffer> {
  const side = Math.max(1, Math.floor(Math.min(width, height) / 2));
  const square = await sharp({ create: { width: side, height: side, channels: 3, background: { r: 20, g: 30, b: 40 } } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: { r: 235, g: 235, b: 230 } } })
    .composite([{ input: square, left: Math.floor((width - side) / 2), top: Math.floor((height - side) / 2) }])
    .toFormat(format)
    .toBuffer();
}

/**
 * A syntactically valid PNG whose IHDR claims width×height (a decompression-bomb header): 8-bit RGBA
 * unless told otherwise (colour type 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA; interlace 1 = Adam7).
 */
export function pngHeaderClaiming(width: number, height: number, ihdrFields: { bitDepth?: number; colourType?: number; interlace?: 0 | 1 } = {}): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = ihdrFields.bitDepth ?? 8;
  ihdr[9] = ihdrFields.colourType ?? 6;
  ihdr[12] = ihdrFields.interlace ?? 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** `n` bytes of a seeded linear congruential sequence: the same "noise" on every run. */
export function seededBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

/**
 * A w×h PNG: a noisy ellipse (the subject) on a flat background. The model keeps the subject and its
 * noise compresses badly, so the cut-out at size=full is a big PNG (2400×1800: ~6.5 MB).
 */
export function noisySubject(width: number, height: number): Promise<Buffer> {
  const px = Buffer.from(seededBytes(width * height * 3, 7));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = (x - width / 2) / (width * 0.35);
      const dy = (y - height / 2) / (height * 0.42);
      if (dx * dx + dy * dy > 1) px.fill(235, (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  return sharp(px, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}
