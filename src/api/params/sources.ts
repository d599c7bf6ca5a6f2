// Where the image and the background come from: image_file / image_file_b64 / image_url and
// bg_image_file / bg_image_url, before any I/O (api/image-input.ts fetches and sniffs). Pure.

import { isFilePart, type RawFields } from '../../http/fields.js';
import { emptyFile, invalidImageUrl, invalidParameter, missingSource, multipleSources } from '../errors.js';
import { readText } from './fields.js';

/** Where an image comes from, before any I/O. */
export type ImageSource =
  | { kind: 'bytes'; field: 'image_file' | 'image_file_b64' | 'bg_image_file'; data: Uint8Array; filename?: string; type?: string }
  | { kind: 'url'; field: 'image_url' | 'bg_image_url'; url: URL };

/** Decode base64 (standard or URL-safe, optional data: URL prefix). Spaces are `+` lost to form decoding. */
export function decodeBase64(text: string): Uint8Array {
  const comma = text.startsWith('data:') ? text.indexOf(',') : -1;
  const payload = (comma >= 0 ? text.slice(comma + 1) : text).replace(/ /g, '+');
  return Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
}

/** An http(s) URL field; undefined when not given. */
export function readUrl(fields: RawFields, name: 'image_url' | 'bg_image_url'): URL | undefined {
  const text = readText(fields, name);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidImageUrl(name, `'${text.slice(0, 200)}' is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidImageUrl(name, `Only http and https URLs are supported, received ${url.protocol.replace(':', '')}.`);
  }
  return url;
}

/**
 * A file part; undefined when not given. An empty part without a file name is "not given" (the empty
 * string of a text field, or a browser form's file input left empty: filename=""); an empty file
 * that has a name was sent, and is refused as what it is.
 */
export function readFile(fields: RawFields, name: 'image_file' | 'bg_image_file'): ImageSource | undefined {
  const v = fields.get(name);
  if (v === undefined || v === null || v === '') return undefined;
  if (isFilePart(v)) {
    if (v.data.byteLength === 0) {
      if (!v.filename) return undefined;
      throw emptyFile(name, v.filename);
    }
    return { kind: 'bytes', field: name, data: v.data, filename: v.filename, type: v.type };
  }
  // JSON/urlencoded bodies cannot carry binary; a string here is a client mistake, not a file.
  throw invalidParameter(name, 'a file upload (multipart/form-data)', v);
}

/**
 * image_file_b64's text. A JSON number or boolean is refused as not a string: read as text, `5` is
 * base64 for nothing and `true` for three stray bytes, and the client was told "an empty file" or "an
 * unknown file type" about what is a type mistake.
 */
function readBase64Text(fields: RawFields): string | undefined {
  const raw = fields.get('image_file_b64');
  if (typeof raw === 'number' || typeof raw === 'boolean') throw invalidParameter('image_file_b64', 'a string (the image in base64)', raw);
  return readText(fields, 'image_file_b64');
}

/** Exactly one of image_file / image_file_b64 / image_url. Shared by /removebg and /improve. */
export function readImageSource(fields: RawFields): ImageSource {
  const given: ImageSource[] = [];
  const file = readFile(fields, 'image_file');
  if (file) given.push(file);
  const b64 = readBase64Text(fields);
  if (b64 !== undefined) given.push({ kind: 'bytes', field: 'image_file_b64', data: decodeBase64(b64) });
  const url = readUrl(fields, 'image_url');
  if (url) given.push({ kind: 'url', field: 'image_url', url });
  if (given.length === 0) throw missingSource();
  if (given.length > 1) throw multipleSources(given.map((s) => s.field));
  return given[0]!;
}
