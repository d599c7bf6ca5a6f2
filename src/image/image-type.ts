// Image type sniffing by magic bytes. Pure. Clients omit part content types and send dummy
// filenames (python requests: filename="image_file"), so the bytes are the only truth.

export type AcceptedImageType = 'jpg' | 'png' | 'webp';

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0): boolean => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);

const ascii = (b: Uint8Array, start: number, end: number): string => String.fromCharCode(...b.subarray(start, Math.min(end, b.length)));

/** jpg/png/webp when the bytes carry that format's signature, else null. */
export function sniffImageType(bytes: Uint8Array): AcceptedImageType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
  return null;
}

/** Names a client may declare for the types we accept. */
const ACCEPTED_NAMES = new Set(['jpg', 'jpeg', 'pjpeg', 'png', 'apng', 'webp']);

/** A short name for what the bytes look like, for "Expected jpg/png/webp, received <x>": `gif`, `a text file (text/plain)`. */
export function describeFileType(bytes: Uint8Array, declaredType?: string, filename?: string): string {
  const known = sniffImageType(bytes);
  if (known) return known;
  if (bytes.length === 0) return 'an empty file';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(bytes, 0, 2) === 'BM') return 'bmp';
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (ascii(bytes, 0, 5) === '%PDF-') return 'pdf';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  if (ascii(bytes, 4, 8) === 'ftyp') {
    const brand = ascii(bytes, 8, 12).trim().toLowerCase();
    if (brand.startsWith('hei') || brand.startsWith('mif') || brand === 'heix') return 'heic';
    if (brand.startsWith('avi')) return 'avif';
    if (brand.startsWith('qt')) return 'mov';
    return 'mp4';
  }
  if (ascii(bytes, 0, 4) === 'RIFF') return (bytes.length >= 12 && ascii(bytes, 8, 12).trim().toLowerCase()) || 'riff';
  if (startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])) return 'webm';
  const head = ascii(bytes, 0, 64).trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('svg'))) return 'svg';
  if (head.startsWith('<')) return 'html';
  // Fall back on what the client declared, stripped to a token (never echo arbitrary text). A
  // declared jpg/png/webp whose bytes are not one (cut short, mislabelled) is not "received png".
  const mime = declaredType?.split(';')[0]?.trim().toLowerCase();
  const declared = mime && /^[a-z]{1,20}\/[a-z0-9.+-]{1,40}$/.test(mime) && mime !== 'application/octet-stream' ? mime : null;
  const ext = filename?.split('.').pop()?.toLowerCase();
  const extension = ext && ext !== filename?.toLowerCase() && /^[a-z0-9]{1,8}$/.test(ext) ? ext : null;
  const subtype = declared?.split('/')[1];
  if (subtype && ACCEPTED_NAMES.has(subtype)) return `an unknown file type (declared ${subtype})`;
  if (!declared && extension && ACCEPTED_NAMES.has(extension)) return `an unknown file type (declared ${extension})`;
  const how = declared ?? (extension && `.${extension}`);
  if (looksLikeText(bytes)) return how ? `a text file (${how})` : 'a text file';
  if (declared) return `a file declared as ${declared}`;
  if (extension) return `a .${extension} file`;
  return 'an unknown file type';
}

/** Its first 512 bytes are UTF-8 text: no control characters other than tab, line breaks and form feed. */
function looksLikeText(bytes: Uint8Array): boolean {
  const sample = bytes.subarray(0, 512);
  for (const c of sample) if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d) return false;
  try {
    // stream: a character cut at the sample's end is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}
