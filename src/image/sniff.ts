// Identifies an image container by its first bytes (clients often send no or a dummy content type).

export type ImageKind = 'jpeg' | 'png' | 'webp';

export function sniffImage(bytes: Uint8Array): ImageKind | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (
    bytes.length >= 8 &&
    bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47 &&
    bytes[4] === 0x0d && bytes[5] === 0x0a && bytes[6] === 0x1a && bytes[7] === 0x0a
  ) {
    return 'png';
  }
  if (
    bytes.length >= 12 &&
    bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x46 &&
    bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50
  ) {
    return 'webp';
  }
  return null;
}

/** A short human name for what the bytes look like, for "Expected jpg/png/webp, received …" details. */
export function describeBytes(bytes: Uint8Array): string {
  const kind = sniffImage(bytes);
  if (kind) return kind;
  if (bytes.length === 0) return 'an empty file';
  const head = Buffer.from(bytes.subarray(0, 12));
  if (head.subarray(4, 8).toString('latin1') === 'ftyp') return 'mp4/heic';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'gif';
  if (head.subarray(0, 4).toString('latin1') === '%PDF') return 'pdf';
  if (head.subarray(0, 2).toString('latin1') === 'BM') return 'bmp';
  if (head[0] === 0x49 && head[1] === 0x49 && head[2] === 0x2a) return 'tiff';
  if (head[0] === 0x4d && head[1] === 0x4d && head[3] === 0x2a) return 'tiff';
  if (head.subarray(0, 2).toString('latin1') === 'PK') return 'zip';
  return 'unknown data';
}
