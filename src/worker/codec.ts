// sharp (libvips) helpers for the worker: probe, decode to raw, encode; PNG through the addon. One
// libvips thread per worker: ORT threads and the other workers already fill the cores.
import sharp, { type Sharp } from 'sharp';
import { zipSync } from 'fflate';
import { loadBinding } from '../native/binding.js';
import type { ContentType } from '../domain/removal.js';
import type { DecodeHeader } from './decode-budget.js';

sharp.concurrency(1);
// Each request's image is different; libvips' operation cache only holds memory.
sharp.cache(false);

export interface Probe {
  /** Oriented size (EXIF orientation applied). */
  width: number;
  height: number;
  hasAlpha: boolean;
  /** What decoding it takes (stored orientation), for the decode budget. */
  header: DecodeHeader;
  /**
   * A JPEG, PNG or WebP that decodes to sRGB with nothing to convert: 3 channels of 8 bits, no ICC profile, no
   * orientation to apply. decodeRgbaOwned decodes it into memory of our own.
   */
  plainRgb: boolean;
}

/**
 * libvips read the bytes as a format the pipeline does not decode (a GIF, a TIFF…). Not a sniff: the
 * edges sniffed already (api/image-input.ts, lib/remove.ts); this is the decoder naming what it read.
 */
export class UnsupportedFormatError extends Error {
  constructor(readonly format: string) {
    super(`unsupported image format ${format}`);
    this.name = 'UnsupportedFormatError';
  }
}

/** What the probe needs of a header, in sharp's metadata() terms (`depth`: libvips' band format nick). */
interface HeaderFields {
  format: 'jpeg' | 'png' | 'webp';
  width: number;
  height: number;
  channels: number;
  depth: string;
  srgb: boolean;
  hasAlpha: boolean;
  hasProfile: boolean;
  /** 1 where the header has none. */
  orientation: number;
  interlaced: boolean;
  chromaSubsampling?: string;
}

/** libvips' band formats in enum order (VipsBandFormat), as sharp names them in metadata().depth. */
const BAND_FORMATS = ['uchar', 'char', 'ushort', 'short', 'uint', 'int', 'float', 'complex', 'double', 'dpcomplex'];
const VIPS_INTERPRETATION_SRGB = 22;

/**
 * Header-only look at the image: oriented size and how it is stored, without decoding pixels. Read
 * by the addon from libvips' header on this thread (~0.1 ms; sharp's metadata() goes through its
 * thread pool and back, ~0.5-1.5 ms a photo); through sharp where the addon cannot (libvips not
 * reachable, or bytes it does not read as a JPEG, PNG or WebP header), so that sharp names the format
 * or the fault as before.
 */
export async function probe(input: Uint8Array): Promise<Probe> {
  const facts = loadBinding().probeHeader(input);
  if (facts) {
    return probeOf({
      format: facts.format,
      width: facts.width,
      height: facts.height,
      channels: facts.bands,
      depth: BAND_FORMATS[facts.bandFormat] ?? 'unknown',
      srgb: facts.interpretation === VIPS_INTERPRETATION_SRGB,
      hasAlpha: facts.hasAlpha,
      hasProfile: facts.hasProfile,
      orientation: facts.orientation > 0 ? facts.orientation : 1,
      interlaced: facts.interlaced,
      ...(facts.chromaSubsampling ? { chromaSubsampling: facts.chromaSubsampling } : {}),
    });
  }
  return probeBySharp(input);
}

/** codec.probe through sharp's metadata(): what it falls back to, and what the tests hold it to. */
export async function probeBySharp(input: Uint8Array): Promise<Probe> {
  const meta = await sharp(input, { limitInputPixels: false }).metadata();
  if (!meta.width || !meta.height) throw new Error('image has no dimensions');
  if (meta.format !== 'jpeg' && meta.format !== 'png' && meta.format !== 'webp') throw new UnsupportedFormatError(String(meta.format));
  return probeOf({
    format: meta.format,
    width: meta.width,
    height: meta.height,
    channels: meta.channels ?? 4,
    depth: meta.depth ?? 'uchar',
    srgb: meta.space === 'srgb',
    hasAlpha: meta.hasAlpha === true,
    hasProfile: meta.hasProfile === true,
    orientation: meta.orientation ?? 1,
    interlaced: meta.isProgressive === true,
    ...(meta.chromaSubsampling ? { chromaSubsampling: meta.chromaSubsampling } : {}),
  });
}

function probeOf(h: HeaderFields): Probe {
  if (!h.width || !h.height) throw new Error('image has no dimensions');
  const swap = h.orientation >= 5;
  const bytesPerSample = h.depth === 'ushort' || h.depth === 'short' ? 2 : h.depth === 'uchar' || h.depth === 'char' ? 1 : 4;
  return {
    width: swap ? h.height : h.width,
    height: swap ? h.width : h.height,
    hasAlpha: h.hasAlpha,
    plainRgb: h.channels === 3 && h.srgb && !h.hasProfile && h.orientation === 1 && h.depth === 'uchar',
    header: {
      format: h.format,
      width: h.width,
      height: h.height,
      channels: h.channels,
      bytesPerSample,
      interlaced: h.interlaced,
      ...(h.chromaSubsampling ? { chromaSubsampling: h.chromaSubsampling } : {}),
      orientation: h.orientation,
    },
  };
}

function decoder(input: Uint8Array, maxPixels: number): Sharp {
  // failOn 'truncated': a cut-off upload is an error, not a half-grey photo.
  return sharp(input, { limitInputPixels: maxPixels, failOn: 'truncated', sequentialRead: true }).rotate().toColourspace('srgb');
}

export interface Raw {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
  /** The bytes fill an ArrayBuffer of their own that can be transferred (sharp's Buffers cannot: they are marked untransferable). */
  transferable?: boolean;
}

async function toRaw(img: Sharp): Promise<Raw> {
  const { data, info } = await img.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Decode at output size as straight RGBA (EXIF orientation applied, CMYK/grey/16-bit to 8-bit sRGB). */
export function decodeRgba(input: Uint8Array, maxPixels: number, width: number, height: number, fullSize?: boolean): Promise<Raw> {
  let img = decoder(input, maxPixels);
  if (!fullSize) img = img.resize(width, height, { fit: 'fill', kernel: 'lanczos3' });
  return toRaw(img.ensureAlpha());
}

/**
 * A plain photo (Probe.plainRgb) at its own size as RGBA, decoded by libvips straight into `into`
 * (exactly width × height × 4 bytes) or into bytes of their own (transferable): the bytes decodeRgba
 * gives at full size, without sharp's buffer of libvips' own. That buffer is fresh memory for every
 * photo (a 1 MP photo: 13–18 ms through sharp, 5 ms into resident memory) and cannot be transferred, so
 * the staged path copied it once more (12 MP: ~16 ms). Synchronous: the calling thread decodes (a
 * decode that should overlap other work goes through decodeRgba). Undefined where this cannot decode
 * it (libvips not reachable, the photo not plain after all): decode it with decodeRgba. Throws the
 * decoder's error for bytes that do not decode.
 */
export function decodeRgbaOwned(input: Uint8Array, width: number, height: number, into?: Uint8Array): Raw | undefined {
  const dst = into ?? Buffer.allocUnsafeSlow(width * height * 4);
  if (!loadBinding().decodePlainRgba(input, width, height, dst)) return undefined;
  const data = Buffer.from(dst.buffer, dst.byteOffset, dst.byteLength);
  return { data, width, height, channels: 4, transferable: !into };
}

/** What decodeForModel needs to know of the photo to pick its path (codec.probe's oriented size). */
export interface ModelDecodeHint {
  width: number;
  height: number;
  hasAlpha: boolean;
}

/**
 * Largest photo (RGB bytes at its own size) whose model input is resized in memory by the addon
 * rather than by libvips: 16 MB, 5.3 MP, covers every photo the model enlarges but the extreme panoramas.
 */
export const MODEL_RESIZE_IN_MEMORY_MAX_BYTES = 16 * 1024 * 1024;

/**
 * True when the model input is made by decoding the photo at its own size and resizing it in the
 * addon (native/src/resize.h): where the model enlarges the photo in some axis, libvips takes its
 * generic affine path (~40 ms for a 1 MP photo to 1024² on one core; the addon 8–20 ms, the decode
 * 4–10 ms, the same bytes within ±4 levels). Opaque photos only: sharp resizes an alpha image
 * premultiplied, the addon does not. Shrinking in both axes stays with libvips (shrink-on-load).
 */
export function resizesModelInputInMemory(photo: ModelDecodeHint, width: number, height: number): boolean {
  const enlarges = photo.width < width || photo.height < height;
  return enlarges && !photo.hasAlpha && photo.width * photo.height * 3 <= MODEL_RESIZE_IN_MEMORY_MAX_BYTES;
}

/**
 * Decode to the model's input size, RGB: shrink-on-load and libvips' cubic resize, or (where
 * `resizesModelInputInMemory` says, given the photo) a decode at the photo's own size resized by the
 * addon on `threads` threads. Without `photo`, always libvips.
 */
export async function decodeForModel(input: Uint8Array, maxPixels: number, width: number, height: number, photo?: ModelDecodeHint, threads = 1): Promise<Raw> {
  if (photo && resizesModelInputInMemory(photo, width, height)) {
    const full = await toRaw(decoder(input, maxPixels).removeAlpha());
    if (full.channels === 3 || full.channels === 4) return resizeInMemory(full, width, height, threads);
  }
  return toRaw(decoder(input, maxPixels).resize(width, height, { fit: 'fill', kernel: 'cubic' }).removeAlpha());
}

/** The addon's resize (native/src/resize.h) into a Buffer that owns its ArrayBuffer (transferable as is). */
function resizeInMemory(raw: Raw, width: number, height: number, threads: number, into?: Uint8Array): Raw {
  const data = into ? Buffer.from(into.buffer, into.byteOffset, into.byteLength) : Buffer.allocUnsafeSlow(width * height * 3);
  loadBinding().resizeToRgb(raw.data, raw.width, raw.height, raw.channels as 3 | 4, data, width, height, threads);
  return { data, width, height, channels: 3, transferable: !into };
}

/**
 * A decoded image resized (fill) to the model's input, RGB. Opaque: by the addon, whatever the scale
 * (12 MP RGBA to 1024² on one AVX2 core: ~49 ms, libvips' resize of the same pixels ~105 ms; for a
 * photo the model enlarges, the bytes decodeForModel's in-memory path gives), into `into` where given
 * (width × height × 3 bytes). With alpha, libvips (it resizes premultiplied, as decodeForModel does).
 */
export async function resizeForModel(raw: Raw, width: number, height: number, opaque: boolean, threads = 1, into?: Uint8Array): Promise<Raw> {
  if (opaque && (raw.channels === 3 || raw.channels === 4)) return resizeInMemory(raw, width, height, threads, into);
  return toRaw(rawImage(raw).resize(width, height, { fit: 'fill', kernel: 'cubic' }).removeAlpha());
}

/** A decoded RGBA image resized (fill) to the output size, as decodeRgba gives. */
export function resizeRgba(raw: Raw, width: number, height: number): Promise<Raw> {
  return toRaw(rawImage(raw).resize(width, height, { fit: 'fill', kernel: 'lanczos3' }));
}

/** Background image decoded and resized to cover the canvas (centred, aspect kept). */
export function decodeBackground(input: Uint8Array, width: number, height: number): Promise<Raw> {
  return toRaw(decoder(input, 50_000_000).resize(width, height, { fit: 'cover', position: 'centre' }).ensureAlpha());
}

function rawImage(raw: Raw): Sharp {
  const img = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels as 1 | 3 | 4 } });
  // libvips would otherwise widen a one-channel raw image to sRGB on output.
  return raw.channels === 1 ? img.toColourspace('b-w') : img;
}

/** Crop/pad an RGBA buffer to `rect` (may extend past the edges: padding is transparent). */
export async function cropPad(raw: Raw, rect: { top: number; left: number; width: number; height: number }): Promise<Raw> {
  const x1 = Math.max(0, rect.left);
  const y1 = Math.max(0, rect.top);
  const x2 = Math.min(raw.width, rect.left + rect.width);
  const y2 = Math.min(raw.height, rect.top + rect.height);
  let img = rawImage(raw).extract({ left: x1, top: y1, width: Math.max(1, x2 - x1), height: Math.max(1, y2 - y1) });
  const pad = { top: y1 - rect.top, left: x1 - rect.left, bottom: rect.top + rect.height - y2, right: rect.left + rect.width - x2 };
  if (pad.top || pad.left || pad.bottom || pad.right) {
    img = sharp(await img.raw().toBuffer(), { raw: { width: Math.max(1, x2 - x1), height: Math.max(1, y2 - y1), channels: 4 } }).extend({
      ...pad,
      background: { r: 0, g: 0, b: 0, alpha: 0 },
    });
  }
  return toRaw(img);
}

/** Place `subject` (RGBA) resized to `box` on a transparent canvas. */
export async function placeOnCanvas(
  subject: Raw,
  box: { top: number; left: number; width: number; height: number },
  canvas: { width: number; height: number },
): Promise<Raw> {
  const resized = await rawImage(subject).resize(box.width, box.height, { fit: 'fill' }).raw().toBuffer();
  const out = await sharp({ create: { width: canvas.width, height: canvas.height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: resized, raw: { width: box.width, height: box.height, channels: 4 }, left: box.left, top: box.top }])
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: out.data, width: out.info.width, height: out.info.height, channels: 4 };
}

export function hasTransparency(raw: Raw): boolean {
  if (raw.channels !== 4) return false;
  const d = raw.data;
  for (let i = 3; i < d.length; i += 4) if (d[i] !== 255) return true;
  return false;
}

export interface Encoded {
  data: Uint8Array;
  contentType: ContentType;
}

// PNG comes from the addon (native/src/png_encode.h) with strategy 'fast' (png_fast.h: Sub, Up or
// Paeth per row, runs as matches, one Huffman code per strip; no zlib), in strips on `threads`
// threads, the same bytes for any thread count. Against 'rle' (filter Up + zlib's Z_RLE, used before)
// a 12 MP cut-out encodes 4.3x faster on one thread (28.6 against 123.9 ms) and 3.8% smaller, the 43
// dev cut-outs 5.3% smaller in all, none larger (docs/native.md, "PNG encoding"). The level only
// tells stored (0) from compressed.
const PNG_OPTIONS = { level: 4, strategy: 'fast' } as const;

export interface PngOptions {
  /** Deflate threads (1..64, default 1); never changes the bytes. */
  threads?: number;
}

function pngBytes(data: Uint8Array, width: number, height: number, channels: number, opts: PngOptions): Uint8Array {
  const threads = opts.threads ?? 1;
  return loadBinding().encodePng(data, width, height, channels as 1 | 2 | 3 | 4, { ...PNG_OPTIONS, threads });
}

async function bytesOf(img: Sharp): Promise<Uint8Array> {
  // Not toUint8Array(): sharp 0.35.5 never frees its libvips output, leaking every result
  // (docs/memory.md, "sharp's toUint8Array leak"); drop this once a fixed sharp is out. toBuffer()'s
  // Buffer is marked untransferable, so copy it once into an ArrayBuffer of its own that move() can
  // transfer.
  return new Uint8Array(await img.toBuffer());
}

// async like the other encoders; the encode itself is synchronous (the worker is the async boundary).
export async function encodePng(raw: Raw, opts: PngOptions = {}): Promise<Encoded> {
  return { data: pngBytes(raw.data, raw.width, raw.height, raw.channels, opts), contentType: 'image/png' };
}

export async function encodeJpeg(raw: Raw): Promise<Encoded> {
  // JPEG has no alpha: remove.bg's JPEG results sit on white unless a bg_color is given.
  let img = rawImage(raw);
  if (raw.channels === 4) img = img.flatten({ background: '#ffffff' });
  return { data: await bytesOf(img.jpeg({ quality: 90, mozjpeg: false })), contentType: 'image/jpeg' };
}

export async function encodeWebp(raw: Raw): Promise<Encoded> {
  return { data: await bytesOf(rawImage(raw).webp({ quality: 90, alphaQuality: 100, effort: 2 })), contentType: 'image/webp' };
}

/** remove.bg's ZIP: color.jpg (RGB, edge-corrected colour) + alpha.png (grayscale matte). */
export async function encodeZip(rgba: Raw, opts: PngOptions = {}): Promise<Encoded> {
  const colour = rawImage(rgba).removeAlpha().jpeg({ quality: 90 }).toBuffer();
  const binding = loadBinding();
  const matte = Buffer.allocUnsafe(rgba.width * rgba.height);
  binding.extractAlpha(rgba.data, matte);
  const a = pngBytes(matte, rgba.width, rgba.height, 1, opts);
  const c = await colour;
  // Members are already compressed: store them.
  const data = zipSync({ 'color.jpg': [c, { level: 0 }], 'alpha.png': [a, { level: 0 }] });
  return { data, contentType: 'application/zip' };
}
