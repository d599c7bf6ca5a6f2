// Request bodies → raw fields: multipart/form-data (read by its framing check), application/json,
// application/x-www-form-urlencoded, as remove.bg accepts them. No validation beyond syntax, which is
// strict: a multipart body must be exactly well framed (multipart-framing.ts), and a field given
// twice (multipart or urlencoded) is refused rather than guessed at. How many fields a body holds is
// counted on its bytes as they arrive, before it gets here (field-limits.ts, context.ts: readFields).
// The fields come in http's own types (fields.ts), which api/params/ reads into a request.

import type { FilePart, RawFields, RawValue } from './fields.js';
import { invalidBody } from './http-error.js';
import { parseContentType } from './content-type.js';
import { checkMultipartFraming, MultipartFramingError, type FramedPart } from './multipart-framing.js';

/** Fields whose multipart parts are always binary, whatever the part headers say. */
const FILE_FIELDS = new Set(['image_file', 'bg_image_file']);

export function parseForm(contentTypeHeader: string | undefined, body: Uint8Array): RawFields {
  // An empty body is "no fields" whatever the type (removd sends Content-Type: application/json on GETs).
  if (body.byteLength === 0) return new Map();
  const { essence, params } = parseContentType(contentTypeHeader);
  switch (essence) {
    case 'multipart/form-data':
      return parseMultipart(body, params.get('boundary'));
    case 'application/json':
      return parseJson(body);
    case 'application/x-www-form-urlencoded':
      return parseUrlencoded(body);
    default:
      if (essence.endsWith('+json')) return parseJson(body);
      throw invalidBody(`Unsupported Content-Type '${essence || '(none)'}'; use multipart/form-data, application/json or application/x-www-form-urlencoded.`);
  }
}

const textDecoder = new TextDecoder('utf-8');

function parseMultipart(body: Uint8Array, boundary: string | undefined): RawFields {
  if (!boundary || boundary.length > 70) throw invalidBody('Malformed multipart/form-data body: missing or invalid boundary.');
  let parts: FramedPart[];
  try {
    parts = checkMultipartFraming(body, boundary);
  } catch (err) {
    if (err instanceof MultipartFramingError) throw invalidBody(err.message);
    throw err;
  }
  const fields = new Map<string, RawValue>();
  for (const { name, filename, type, dataStart, dataEnd } of parts) {
    if (fields.has(name)) throw duplicateField(name);
    const data = new Uint8Array(body.buffer, body.byteOffset + dataStart, dataEnd - dataStart);
    if (FILE_FIELDS.has(name) || filename !== undefined) {
      // A view on the body (which it keeps alive): api/image-input.ts decides whether it travels to
      // the worker with the body's buffer or as a copy (image/owned-bytes.ts).
      const file: FilePart = { kind: 'file', data, ...(filename !== undefined && { filename }), ...(type !== undefined && { type }) };
      fields.set(name, file);
    } else {
      fields.set(name, textDecoder.decode(data));
    }
  }
  return fields;
}

function parseJson(body: Uint8Array): RawFields {
  let value: unknown;
  try {
    value = JSON.parse(textDecoder.decode(body));
  } catch (err) {
    throw invalidBody(`Malformed JSON body: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidBody('The JSON body must be an object.');
  return new Map(Object.entries(value as Record<string, RawValue>));
}

function parseUrlencoded(body: Uint8Array): RawFields {
  const fields = new Map<string, RawValue>();
  for (const [key, value] of new URLSearchParams(textDecoder.decode(body))) {
    if (fields.has(key)) throw duplicateField(key);
    fields.set(key, value);
  }
  return fields;
}

/** Two values for one field: which one the client meant is a guess, so neither is used. */
function duplicateField(name: string) {
  return invalidBody(`The field '${name.length > 80 ? `${name.slice(0, 80)}…` : name}' is given more than once.`);
}
