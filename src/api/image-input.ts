// An ImageSource (upload, base64 or URL) → checked bytes ready to be transferred to a worker (their
// own buffer, or a view on their request's body: image/owned-bytes.ts), with their type. The one
// sniff of the HTTP API: the type is decided here by magic bytes, never by headers or filenames, and
// travels with the bytes (the worker does not sniff again; /improve names its file by it).

import { FetchBusyError, fetchImage, ImageFetchError, type FetchImageOptions } from '../fetch/image-url.js';
import { describeFileType, sniffImageType, type AcceptedImageType } from '../image/image-type.js';
import { canTransfer, ownedCopy, ownsBuffer } from '../image/owned-bytes.js';
import type { ImageSource } from './params/sources.js';
import { failedBgDownload, failedImageDownload, fileTooLarge, invalidFileType, serviceBusy } from './errors.js';

export interface ImageInputDeps {
  maxImageBytes: number;
  fetchOptions: Partial<FetchImageOptions>;
}

/** Bytes of an accepted type that can be transferred to a worker (image/owned-bytes.ts canTransfer). */
export interface InputImage {
  bytes: Uint8Array;
  type: AcceptedImageType;
}

/** The request an image is loaded for: its signal, and its input memory (http/context.ts holdInput). */
export interface ImageRequest {
  readonly signal: AbortSignal;
  holdInput(bytes: number): void;
}

export async function loadImage(source: ImageSource, deps: ImageInputDeps, request: ImageRequest): Promise<InputImage> {
  const background = source.field.startsWith('bg_');
  let bytes: Uint8Array;
  let declaredType: string | undefined;
  let filename: string | undefined;
  if (source.kind === 'url') {
    try {
      // A downloaded image waits in the queue like an uploaded one: its bytes count where a body's do.
      const hold = (bytes: number) => request.holdInput(bytes);
      const fetched = await fetchImage(source.url, { ...deps.fetchOptions, maxBytes: deps.maxImageBytes, signal: request.signal, hold });
      bytes = fetched.data;
      declaredType = fetched.contentType;
    } catch (err) {
      if (err instanceof ImageFetchError) throw background ? failedBgDownload(err.reason) : failedImageDownload(err.reason);
      // Our capacity, not the URL: the client may retry as is.
      if (err instanceof FetchBusyError) throw serviceBusy(1, `Too many image downloads in progress (${err.message}); please retry later.`);
      throw err;
    }
  } else {
    if (source.data.byteLength > deps.maxImageBytes) throw fileTooLarge(deps.maxImageBytes);
    bytes = source.data;
    declaredType = source.type;
    filename = source.filename;
  }
  const type = sniffImageType(bytes);
  if (type === null) throw invalidFileType(describeFileType(bytes, declaredType, filename), background ? source.field : 'image');
  return { bytes: background ? ownBytes(bytes) : transferableBytes(bytes), type };
}

/** The photo: as it is where it can be transferred (a view on its request's body, most often), else a copy that can. */
function transferableBytes(bytes: Uint8Array): Uint8Array {
  return canTransfer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : ownedCopy(bytes);
}

/**
 * A background image in a buffer of its own: when it came in the photo's body, the photo's transfer
 * takes that buffer to the worker, and the staged path sends the background again at its last stage.
 */
function ownBytes(bytes: Uint8Array): Uint8Array {
  return ownsBuffer(bytes) ? new Uint8Array(bytes.buffer, 0, bytes.byteLength) : ownedCopy(bytes);
}
