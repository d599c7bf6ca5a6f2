// The decode estimate from an image header: shrink-on-load, JPEG coefficients, held frames, streamed rows, orientation, and the budget it is checked against.
import t from 'tap';
import {
  chromaFraction,
  decodeCost,
  DECODE_BASE_BYTES,
  describeDecode,
  jpegCoefficientBytesPerPixel,
  jpegShrinkOnLoad,
  STREAM_ROWS,
  type DecodeHeader,
} from '../../src/worker/decode-budget.js';
import { MAX_DECODE_BYTES, MAX_DECODE_BYTES_IN_FLIGHT, TIER_MAX_PIXELS } from '../../src/domain/removal.js';

const MB = 1024 * 1024;
const png = (width: number, height: number, more: Partial<DecodeHeader> = {}): DecodeHeader => ({
  format: 'png',
  width,
  height,
  channels: 4,
  bytesPerSample: 1,
  interlaced: false,
  orientation: 1,
  ...more,
});
const jpeg = (width: number, height: number, more: Partial<DecodeHeader> = {}): DecodeHeader => ({
  format: 'jpeg',
  width,
  height,
  channels: 3,
  bytesPerSample: 1,
  interlaced: false,
  chromaSubsampling: '4:2:0',
  orientation: 1,
  ...more,
});
const model = { width: 1024, height: 1024, channels: 3, resize: true };

t.test('JPEG shrink-on-load follows sharp: the largest of 8, 4, 2 within the shrink, one step down when the whole shrink equals it', async (t) => {
  const cases: [number, number][] = [
    [1, 1],
    [1.9, 1],
    [2, 1],
    [2.5, 1],
    [3, 2],
    [4, 2],
    [4.5, 2],
    [5, 4],
    [7.9, 4],
    [8, 4],
    [8.5, 4],
    [9, 8],
    [20, 8],
  ];
  for (const [shrink, load] of cases) t.equal(jpegShrinkOnLoad(shrink), load, `shrink ${shrink} → ${load}`);
});

t.test('chroma subsampling → the share of luma samples each chroma plane keeps', async (t) => {
  const cases: [string | undefined, number][] = [
    ['4:4:4', 1],
    ['4:2:2', 0.5],
    ['4:2:0', 0.25],
    ['4:1:1', 0.25],
    ['4:4:0', 0.5],
    ['4:2:0:4', 0.25],
    [undefined, 1],
    ['odd', 1],
  ];
  for (const [s, f] of cases) t.equal(chromaFraction(s), f, `${s}`);
  t.equal(jpegCoefficientBytesPerPixel({ channels: 1 }), 2, 'greyscale: one 2-byte coefficient a pixel');
  t.equal(jpegCoefficientBytesPerPixel({ channels: 3, chromaSubsampling: '4:2:0' }), 3);
  t.equal(jpegCoefficientBytesPerPixel({ channels: 3, chromaSubsampling: '4:4:4' }), 6);
  t.equal(jpegCoefficientBytesPerPixel({ channels: 4, chromaSubsampling: '4:4:4:4' }), 8, 'CMYK');
});

t.test('an interlaced PNG is held whole, at its own depth, however small the target', async (t) => {
  const bomb = png(7000, 7000, { bytesPerSample: 2, interlaced: true });
  const frame = 7000 * 7000 * 4 * 2;
  const preview = decodeCost(bomb, { width: 500, height: 500, channels: 4, resize: true });
  t.ok(preview.source >= frame, 'the 392 MB frame is counted');
  t.ok(preview.source > MAX_DECODE_BYTES, 'over the budget');
  t.equal(preview.result, 500 * 500 * 4);
  t.equal(preview.total, preview.source + preview.result);
  const plain = decodeCost(png(7000, 7000, { bytesPerSample: 2 }), model);
  t.ok(plain.source < frame / 2 && plain.source < MAX_DECODE_BYTES, `non-interlaced, the same pixels stream (${Math.round(plain.source / MB)} MB)`);
});

t.test('streamed rows: at most STREAM_ROWS of the source and of the resize, by width; none of the height beyond them', async (t) => {
  const wide = decodeCost(png(7000, 7000), model);
  const tall = decodeCost(png(7000, 14000), model);
  t.equal(tall.source, wide.source, 'twice the height, the same rows');
  const rows = STREAM_ROWS * (7000 + 2048 + 1024) * 4;
  t.equal(wide.source, DECODE_BASE_BYTES + rows, 'source rows, box-shrink rows (twice the target), resized rows');
  const short = decodeCost(png(4000, 500), { width: 1024, height: 1024, channels: 3, resize: true });
  t.equal(short.source, DECODE_BASE_BYTES + 500 * (4000 + 1024) * 4, 'a short image: its own height (no box shrink below 2x)');
  const asIs = decodeCost(png(3000, 2000), { width: 3000, height: 2000, channels: 4, resize: false });
  t.equal(asIs.source, DECODE_BASE_BYTES + 2000 * 3000 * 4, 'no resize: the source rows only');
});

t.test('JPEG: shrink-on-load narrows the rows; a multi-scan JPEG keeps every coefficient', async (t) => {
  const photo = jpeg(4000, 3000); // 12 MP
  const preview = decodeCost(photo, { width: 577, height: 433, channels: 4, resize: true });
  const full = decodeCost(photo, { width: 4000, height: 3000, channels: 4, resize: false });
  const rows = (c: { source: number }) => c.source - DECODE_BASE_BYTES;
  t.ok(rows(preview) < rows(full) / 4, `rows: preview ${Math.round(rows(preview) / MB)} MB (loaded at 1/4), full ${Math.round(rows(full) / MB)} MB`);
  const progressive = decodeCost(jpeg(4000, 3000, { interlaced: true }), { width: 577, height: 433, channels: 4, resize: true });
  t.equal(progressive.source - preview.source, 4000 * 3008 * 3, 'plus 3 bytes a pixel (4:2:0), blocks padded to 16');
});

t.test('EXIF orientation: targets are turned back to the stored orientation, and the rotation copies the result', async (t) => {
  const upright = decodeCost(jpeg(6000, 2000), { width: 3000, height: 1000, channels: 4, resize: true });
  const turned = decodeCost(jpeg(6000, 2000, { orientation: 6 }), { width: 1000, height: 3000, channels: 4, resize: true });
  t.equal(turned.source, upright.source, 'same decode as the upright photo');
  t.equal(turned.result, upright.result + 1000 * 3000 * 4, 'plus a copy of the result');
});

t.test('WebP: 4 bytes a pixel at full size (lossless decoding), plus the frame at the load scale', async (t) => {
  const webp: DecodeHeader = { format: 'webp', width: 7000, height: 7000, channels: 3, bytesPerSample: 1, interlaced: false, orientation: 1 };
  const cost = decodeCost(webp, { width: 5000, height: 5000, channels: 4, resize: true });
  t.equal(cost.source, DECODE_BASE_BYTES + 7000 * 7000 * 4 + 5000 * 5000 * 3);
});

t.test('the budget: every 8-bit JPEG (4:2:0) and PNG up to 50 MP fits at every size; the bombs do not', async (t) => {
  const tiers = Object.entries(TIER_MAX_PIXELS);
  const worst = (h: DecodeHeader) =>
    Math.max(
      decodeCost(h, model).source,
      ...tiers.map(([, max]) => {
        const scale = Math.min(1, Math.sqrt(max / (h.width * h.height)));
        const w = Math.floor(h.width * scale);
        const ht = Math.floor(h.height * scale);
        return decodeCost(h, { width: w, height: ht, channels: 4, resize: scale < 1 }).source;
      }),
    );
  for (const [w, h] of [
    [8660, 5773],
    [7071, 7071],
    [12247, 4082],
  ] as const) {
    t.ok(worst(jpeg(w, h)) <= MAX_DECODE_BYTES, `baseline JPEG ${w}x${h}`);
    t.ok(worst(jpeg(w, h, { interlaced: true })) <= MAX_DECODE_BYTES, `progressive JPEG ${w}x${h}`);
    t.ok(worst(png(w, h)) <= MAX_DECODE_BYTES, `RGBA PNG ${w}x${h}`);
    t.ok(worst(png(w, h, { channels: 3, interlaced: true })) <= MAX_DECODE_BYTES, `interlaced RGB PNG ${w}x${h}`);
  }
  t.ok(worst(png(7000, 7000, { bytesPerSample: 2, interlaced: true })) > MAX_DECODE_BYTES, 'interlaced 16-bit RGBA PNG, 49 MP');
  t.ok(worst(png(6000, 6000, { channels: 3, bytesPerSample: 2, interlaced: true })) > MAX_DECODE_BYTES, 'interlaced 16-bit RGB PNG, 36 MP');
  const largest = MAX_DECODE_BYTES + TIER_MAX_PIXELS['50MP'] * 4 * 2; // source, result, rotated copy
  t.ok(MAX_DECODE_BYTES_IN_FLIGHT >= largest, 'the largest decode the budget admits fits under the process ceiling');
});

t.test('describeDecode names what makes the decode costly', async (t) => {
  t.equal(describeDecode(png(7000, 7000, { bytesPerSample: 2, interlaced: true })), '7000x7000 interlaced 16-bit PNG');
  t.equal(describeDecode(jpeg(8000, 6000, { interlaced: true })), '8000x6000 progressive JPEG');
  t.equal(describeDecode({ ...png(16000, 3000), format: 'webp' }), '16000x3000 WebP');
});
