// A failed decode in two forms. For the client, one sentence in a user's words ("The image file is
// truncated or corrupt (JPEG data ends early)."): libvips' own words name its internals (VipsJpeg,
// vipspng, "Input buffer has corrupt header:") and mean nothing to whoever sent the photo. For the
// operator, libvips' words kept as they were: every warning it met, one per line and often repeated
// ("…: VipsJpeg: premature end of JPEG image\nVipsJpeg: Bogus Huffman table definition\n…"), made one
// line for the request log.
import { sniffImageType, type AcceptedImageType } from './image-type.js';

const MAX_CHARS = 300;

/** A decoder error's text as one line: its distinct lines in order, joined by "; ", at most 300 characters. */
export function decoderMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/:$/, '');
    if (!line || seen.has(line)) continue;
    lines.push(line);
    seen.add(line);
    // "Input buffer has corrupt header: VipsJpeg: premature end…" is followed by "VipsJpeg: premature end…".
    const colon = line.indexOf(': ');
    if (colon >= 0) seen.add(line.slice(colon + 2));
  }
  const one = lines.join('; ') || 'the decoder gave no reason';
  return one.length > MAX_CHARS ? `${one.slice(0, MAX_CHARS - 1)}…` : one;
}

const FORMAT_NAMES: Readonly<Record<AcceptedImageType, string>> = { jpg: 'JPEG', png: 'PNG', webp: 'WebP' };

/** The format libvips' words name (its loaders prefix their messages), else the bytes' signature. */
function formatOf(text: string, bytes: Uint8Array | undefined): AcceptedImageType | null {
  if (/VipsJpeg|JPEG/.test(text)) return 'jpg';
  if (/vipspng|libpng|\b(IHDR|IDAT|IEND|PLTE|tRNS)\b/.test(text)) return 'png';
  if (/\bwebp\b/i.test(text)) return 'webp';
  return bytes ? sniffImageType(bytes) : null;
}

/**
 * libvips' (and its loaders') common messages → what happened, in a user's words. First match wins;
 * `format` is the file's format name (JPEG, PNG, WebP, or "image").
 */
const RULES: ReadonlyArray<{ test: RegExp; say: (format: string) => string }> = [
  // libjpeg: the data stops before the image does (a cut download, a partial copy).
  { test: /premature end of JPEG|JPEG datastream contains no image/, say: () => 'The image file is truncated or corrupt (JPEG data ends early).' },
  // libjpeg: features it was built without (arithmetic coding, lossless, 12-bit samples).
  {
    test: /Unsupported JPEG process|Unsupported marker type|Sorry, arithmetic coding|Unsupported color conversion|Invalid JPEG file structure: two SOI|Unsupported JPEG data precision/,
    say: () =>
      'The JPEG file uses a kind of compression this service cannot read (e.g. arithmetic coding, lossless or 12-bit JPEG); save it again as an ordinary JPEG.',
  },
  // libjpeg: damaged tables or markers (Bogus DQT index, Huffman table, SOF…).
  {
    test: /VipsJpeg: (Bogus|Corrupt|Invalid|Huffman|Quantization table|Wrong JPEG)/,
    say: () => 'The JPEG file is corrupt (its header or image data is damaged).',
  },
  // libpng: a chunk's checksum does not match (a damaged copy); before the IDAT rule, which it names.
  { test: /CRC error|bad (adler|checksum)/i, say: (format) => `The ${format} file is corrupt (a checksum does not match its data).` },
  // libpng / spng: the data stops early, or its compressed rows are damaged.
  {
    test: /libpng read error|Not enough image data|Read Error|unexpected end|premature end|too far back|invalid (distance|code|block type|stored block)|incorrect (header check|data check)|IDAT/,
    say: (format) => `The image file is truncated or corrupt (${format} data ends early or is damaged).`,
  },
  {
    test: /unsupported|not supported|unknown (compression|filter|interlace)/i,
    say: (format) => `The ${format} file uses a feature this service cannot read; save it again in a common form.`,
  },
  // libwebp: any damage reads "unable to parse image" (a cut file, a damaged header alike).
  { test: /webp: unable to parse image|webp.*(decode|bitstream)/i, say: () => 'The image file is truncated or corrupt (the WebP data could not be read).' },
  { test: /has no dimensions/, say: (format) => `The ${format} file gives no width or height.` },
  // What remains of a header libvips could not read, with no loader's reason.
  { test: /corrupt header/, say: (format) => `The ${format} file's header is corrupt or incomplete.` },
];

/**
 * The client's words for a failed decode: what is wrong with the file, one sentence, no decoder
 * internals. `bytes` (the file, when at hand) names the format where the message does not.
 */
export function describeDecodeFailure(err: unknown, bytes?: Uint8Array): string {
  const text = err instanceof Error ? err.message : String(err);
  const type = formatOf(text, bytes);
  const format = type ? FORMAT_NAMES[type] : 'image';
  for (const rule of RULES) if (rule.test.test(text)) return rule.say(format);
  return `The ${format} file could not be decoded: it may be corrupt, or use a feature this service cannot read.`;
}
