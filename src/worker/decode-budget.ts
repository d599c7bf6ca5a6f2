// What one decode makes libvips hold, estimated from the image header before a pixel is decoded.
// Pure arithmetic; the pipeline refuses a photo whose source side is over MAX_DECODE_BYTES and
// reserves the total from the process's decode memory (src/process/decode-memory.ts).
//
// Measured with sharp 0.35.5 / libvips 8.18 (docs/memory.md, "Decoding"): every term below is an
// upper bound of what a decode of that kind held in a process of its own.
//   - A streamed decode (baseline JPEG, non-interlaced PNG) keeps up to ~2,000 decoded rows while it
//     resizes: rows of the source, of its box shrink and of the resized image (the rows scale with
//     the widths, not the height: 100–110 MB for a 7000 px wide 16-bit RGBA PNG to 1024², 28 MB at
//     2000 px; 678 MB for a 50000x1000 one to 35355x707). JPEG shrink-on-load narrows the source rows.
//   - An interlaced PNG is decoded whole, at its own bit depth: 7000×7000 16-bit RGBA, 392 MB, for a
//     1024² model input or a 0.25 MP preview alike.
//   - A JPEG with more than one scan (progressive, or baseline with separate scans; libvips reports
//     both as interlaced) keeps every DCT coefficient, 2 bytes a sample: 147 MB at 7000×7000 4:2:0,
//     whatever the shrink-on-load.
//   - WebP: lossless decoding keeps 4 bytes a pixel at full size whatever the scale (206 MB for
//     49 MP), and libvips takes the decoded frame whole (at the shrink-on-load scale). Counted as
//     both for lossy files too: a lossy preview of a big WebP is over-counted (it holds 5–50 MB).
//   - ~8 MB of decoder state (libjpeg, zlib, libvips' buffers) whatever the size.
//   - The result at target size, and a copy of it when EXIF orientation rotates or flips it
//     (libvips rotates after the resize, from memory).

/** What the header says about decoding, in the stored orientation. */
export interface DecodeHeader {
  format: 'jpeg' | 'png' | 'webp';
  width: number;
  height: number;
  /** Bands libvips decodes to: a palette PNG is 3 or 4, a 1-bit greyscale PNG 1, CMYK 4. */
  channels: number;
  /** 2 for 16-bit samples, else 1 (1, 2 and 4-bit PNGs are unpacked to bytes). */
  bytesPerSample: number;
  /** Interlaced PNG, or a JPEG with more than one scan: held whole while decoding. */
  interlaced: boolean;
  /** JPEG chroma subsampling as libvips reports it: '4:2:0', '4:4:4', '4:2:0:4' (CMYK), … */
  chromaSubsampling?: string;
  /** EXIF orientation, 1 (none) to 8. */
  orientation: number;
}

/** One decode's result: its size (oriented), bands and whether it is resized from the source. */
export interface DecodeTarget {
  width: number;
  height: number;
  channels: number;
  resize: boolean;
}

export interface DecodeCost {
  /** Held for the source: the whole frame or coefficients where it cannot be streamed, plus the rows of a streamed read and resize. */
  source: number;
  /** The decoded result, plus the copy an EXIF rotation makes. */
  result: number;
  total: number;
}

/** Decoded rows a streamed read and resize hold (measured: 1,800–2,400; the estimate never falls below a measurement). */
export const STREAM_ROWS = 2048;
/** Decoder state any decode holds (the smallest decodes measured 5–8 MB). */
export const DECODE_BASE_BYTES = 8 * 1024 * 1024;

/** The shrink-on-load factor sharp (fastShrinkOnLoad, the default) asks libjpeg for, given the resize's shrink. */
export function jpegShrinkOnLoad(shrink: number): number {
  let s = shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1;
  // sharp steps down where libjpeg's rounding would leave the image a pixel short.
  if (s > 1 && Math.trunc(shrink) === s) s /= 2;
  return s;
}

/** Fraction of the luma samples each chroma plane has: 4:4:4 → 1, 4:2:2 → 1/2, 4:2:0 → 1/4; unknown → 1. */
export function chromaFraction(subsampling: string | undefined): number {
  const m = /^(\d):(\d):(\d)/.exec(subsampling ?? '');
  if (!m) return 1;
  const [j, a, b] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (j === 0 || a === 0) return 1;
  return Math.min(1, (a / j) * (b === 0 ? 0.5 : b / a));
}

/** Bytes of DCT coefficients libjpeg keeps per pixel for a multi-scan JPEG (2 bytes a sample, blocks padded). */
export function jpegCoefficientBytesPerPixel(header: Pick<DecodeHeader, 'channels' | 'chromaSubsampling'>): number {
  if (header.channels <= 1) return 2;
  const chroma = 2 * chromaFraction(header.chromaSubsampling);
  // A fourth component (CMYK's K) is stored at full resolution.
  return 2 * (1 + chroma + (header.channels >= 4 ? 1 : 0));
}

const roundUp16 = (n: number): number => Math.ceil(n / 16) * 16;

/** A cost with `bytes` more held in its result (a second buffer made from the decode). */
export function addBytes(cost: DecodeCost, bytes: number): DecodeCost {
  return { source: cost.source, result: cost.result + bytes, total: cost.total + bytes };
}

export function decodeCost(header: DecodeHeader, target: DecodeTarget): DecodeCost {
  const { width, height, channels, bytesPerSample } = header;
  // Targets are given oriented; sharp resizes before it rotates, so work in the stored orientation.
  const swap = header.orientation >= 5;
  const tw = Math.max(1, swap ? target.height : target.width);
  const th = Math.max(1, swap ? target.width : target.height);
  const shrink = target.resize ? Math.min(width / tw, height / th) : 1;
  const load = header.format === 'jpeg' ? jpegShrinkOnLoad(shrink) : header.format === 'webp' && shrink > 1 ? shrink : 1;
  const loadWidth = Math.ceil(width / load);
  const loadHeight = Math.ceil(height / load);

  // Rows of the source, of libvips' box shrink (to at most twice the target) and of the resized image.
  const after = shrink / load;
  const widths = target.resize ? loadWidth + (after >= 2 ? Math.min(loadWidth, 2 * tw) : 0) + tw : loadWidth;
  let source = DECODE_BASE_BYTES;
  if (header.format === 'webp') {
    // libwebp's own buffers, then the frame it hands libvips whole, at the load scale.
    source += width * height * 4 + loadWidth * loadHeight * channels;
  } else {
    source += Math.min(loadHeight, STREAM_ROWS) * widths * channels * bytesPerSample;
    if (header.format === 'png' && header.interlaced) source += width * height * channels * bytesPerSample;
    if (header.format === 'jpeg' && header.interlaced) source += roundUp16(width) * roundUp16(height) * jpegCoefficientBytesPerPixel(header);
  }

  const pixels = target.width * target.height;
  const result = pixels * target.channels + (header.orientation > 1 ? pixels * 4 : 0);
  return { source, result, total: source + result };
}

const FORMAT_NAMES = { jpeg: 'JPEG', png: 'PNG', webp: 'WebP' } as const;

/** "7000x7000 interlaced 16-bit PNG", for messages (a multi-scan baseline JPEG is called progressive too). */
export function describeDecode(header: DecodeHeader): string {
  const kind = header.interlaced ? (header.format === 'png' ? 'interlaced ' : 'progressive ') : '';
  const depth = header.bytesPerSample > 1 ? `${header.bytesPerSample * 8}-bit ` : '';
  return `${header.width}x${header.height} ${kind}${depth}${FORMAT_NAMES[header.format]}`;
}

/** Whole MB (2^20 bytes), rounded up, for messages. */
export const toMB = (bytes: number): number => Math.ceil(bytes / (1024 * 1024));
