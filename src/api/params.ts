// remove.bg field schema: raw form fields → a validated, normalised removal request. Pure.
// Every rule here comes from REMOVEBG-API.md §1; each bad value gets remove.bg's per-parameter code.

import type { Channels, Length, Margins, OutputFormat, RemoveOptions, RequestedSize, Roi } from '../domain/removal.js';
import { isFilePart, type RawFields, type RawValue } from '../http/fields.js';
import { CSS_COLORS } from './css-colors.js';
import {
  ApiError,
  invalidImageUrl,
  invalidParameter,
  missingSource,
  multipleBgSources,
  multipleSources,
} from './errors.js';

/** Where an image comes from, before any I/O. */
export type ImageSource =
  | { kind: 'bytes'; field: 'image_file' | 'image_file_b64' | 'bg_image_file'; data: Uint8Array; filename?: string; type?: string }
  | { kind: 'url'; field: 'image_url' | 'bg_image_url'; url: URL };

export interface RemoveRequest {
  source: ImageSource;
  bgSource?: ImageSource;
  size: RequestedSize;
  /** Everything but the size tier (decided by the ledger) and bg image bytes (fetched later). */
  options: Omit<RemoveOptions, 'size' | 'bgImage'>;
  /** Accepted for compatibility, never acted on (no proprietary classifier). */
  hints: { type: string; typeLevel: string; shadowType?: string; shadowOpacity?: string; semitransparency: boolean; addShadow: boolean };
}

// ---- scalar readers ----------------------------------------------------------------------------

/** A field as text; `""`, null and absent all mean "not given" (the official CLI sends `""`). */
export function readText(fields: RawFields, name: string): string | undefined {
  const v = fields.get(name);
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  if (isFilePart(v)) {
    const s = Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength).toString('utf8').trim();
    return s === '' ? undefined : s;
  }
  throw invalidParameter(name, 'a string', v);
}

/** "true"/"false" (any case), 1/0, or JSON booleans. */
export function readBoolean(fields: RawFields, name: string, fallback: boolean): boolean {
  const raw = fields.get(name);
  if (typeof raw === 'boolean') return raw;
  const text = readText(fields, name);
  if (text === undefined) return fallback;
  switch (text.toLowerCase()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      throw invalidParameter(name, "'true' or 'false'", text);
  }
}

function readEnum<T extends string>(fields: RawFields, name: string, table: Readonly<Record<string, T>>, fallback: T): T {
  const text = readText(fields, name);
  if (text === undefined) return fallback;
  const hit = table[text.toLowerCase()];
  if (hit === undefined) throw invalidParameter(name, `one of ${Object.keys(table).join(', ')}`, text);
  return hit;
}

// ---- value tables ------------------------------------------------------------------------------

const SIZES: Readonly<Record<string, RequestedSize>> = {
  preview: 'preview',
  small: 'preview',
  regular: 'preview',
  medium: 'medium',
  hd: 'hd',
  full: 'full',
  '4k': 'full',
  '50mp': '50MP',
  auto: 'auto',
};

const FORMATS: Readonly<Record<string, OutputFormat>> = { auto: 'auto', png: 'png', jpg: 'jpg', webp: 'webp', zip: 'zip' };
const CHANNELS: Readonly<Record<string, Channels>> = { rgba: 'rgba', alpha: 'alpha' };
const TYPES = { auto: 'auto', person: 'person', product: 'product', car: 'car', animal: 'animal', graphic: 'graphic', transportation: 'transportation' } as const;
const TYPE_LEVELS = { none: 'none', '1': '1', '2': '2', latest: 'latest' } as const;
const SHADOW_TYPES = { car: 'car', '3d': '3D', drop: 'drop', none: 'none', auto: 'auto' } as const;
const SHADOW_METHODS = { legacy: 'legacy', latest: 'latest' } as const;
/** Classes a per-type shadow setting may name (`shadow_type[car]=…`). */
const FOREGROUND_CLASSES = new Set(['person', 'product', 'animal', 'car', 'car_interior', 'car_part', 'transportation', 'graphic', 'graphics', 'other']);

// ---- lengths -----------------------------------------------------------------------------------

const LENGTH_RE = /^(\d+(?:\.\d+)?|\.\d+)(px|%)?$/i;

/** `12px`, `10%`, or a unitless `0` (the PyPI client sends "0 0 100% 100%"). */
export function parseLength(token: string): Length | null {
  const m = LENGTH_RE.exec(token);
  if (!m) return null;
  const value = Number(m[1]);
  if (!Number.isFinite(value)) return null;
  const unit = m[2]?.toLowerCase();
  if (unit === undefined) return value === 0 ? { value: 0, unit: 'px' } : null;
  return { value, unit: unit === '%' ? '%' : 'px' };
}

const splitTokens = (text: string): string[] => text.split(/[\s,]+/).filter((t) => t !== '');

export function parseCropMargin(text: string): Margins {
  const fail = () => invalidParameter('crop_margin', "1, 2 or 4 values in px or % (each at most 500px or 50%)", text);
  const tokens = splitTokens(text);
  if (tokens.length !== 1 && tokens.length !== 2 && tokens.length !== 4) throw fail();
  const values = tokens.map((t) => {
    const len = parseLength(t);
    if (!len || (len.unit === 'px' && (len.value > 500 || !Number.isInteger(len.value))) || (len.unit === '%' && len.value > 50)) throw fail();
    return len;
  });
  // CSS order: top right bottom left; 1 value = all sides, 2 = vertical horizontal.
  const [a, b = a, c = a, d = b] = values as [Length, Length?, Length?, Length?];
  return { top: a, right: b!, bottom: c!, left: d! };
}

export function parseRoi(text: string): Roi {
  const fail = () => invalidParameter('roi', "'x1 y1 x2 y2' with each value in px or %", text);
  const tokens = splitTokens(text);
  if (tokens.length !== 4) throw fail();
  const [x1, y1, x2, y2] = tokens.map((t) => {
    const len = parseLength(t);
    if (!len || (len.unit === '%' && len.value > 100)) throw fail();
    return len;
  }) as [Length, Length, Length, Length];
  // Only decidable without the image when both ends share a unit; the worker checks the rest.
  if ((x1.unit === x2.unit && x1.value >= x2.value) || (y1.unit === y2.unit && y1.value >= y2.value)) {
    throw new ApiError(400, 'roi_region_empty', 'ROI region is empty', `The region '${text}' contains no pixels.`);
  }
  return { x1, y1, x2, y2 };
}

const PERCENT_RE = /^(\d+(?:\.\d+)?|\.\d+)%$/;

export function parseScale(text: string): number | undefined {
  if (text.toLowerCase() === 'original') return undefined;
  const m = PERCENT_RE.exec(text);
  const pct = m ? Number(m[1]) : NaN;
  if (!(pct >= 10 && pct <= 100)) throw invalidParameter('scale', "a percentage from '10%' to '100%' or 'original'", text);
  return pct / 100;
}

export function parsePosition(text: string): { x: number; y: number } | undefined {
  const lower = text.toLowerCase();
  if (lower === 'original') return undefined;
  if (lower === 'center') return { x: 50, y: 50 };
  const fail = () => invalidParameter('position', "'original', 'center', 'N%' or 'N% M%' (0% to 100%)", text);
  const tokens = splitTokens(text);
  if (tokens.length < 1 || tokens.length > 2) throw fail();
  const values = tokens.map((t) => {
    const m = PERCENT_RE.exec(t);
    const v = m ? Number(m[1]) : NaN;
    if (!(v >= 0 && v <= 100)) throw fail();
    return v;
  });
  const x = values[0]!;
  return { x, y: values[1] ?? x };
}

/** 3/4/6/8 hex digits with an optional `#`, or a CSS colour name → straight RGBA. */
export function parseBgColor(text: string): [number, number, number, number] {
  const lower = text.toLowerCase();
  if (lower === 'transparent') return [0, 0, 0, 0];
  const named = CSS_COLORS.get(lower);
  if (named !== undefined) return [(named >> 16) & 255, (named >> 8) & 255, named & 255, 255];
  const hex = lower.startsWith('#') ? lower.slice(1) : lower;
  if (/^[0-9a-f]+$/.test(hex)) {
    if (hex.length === 3 || hex.length === 4) {
      const d = [...hex].map((c) => parseInt(c + c, 16));
      return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
    }
    if (hex.length === 6 || hex.length === 8) {
      const d = hex.match(/../g)!.map((p) => parseInt(p, 16));
      return [d[0]!, d[1]!, d[2]!, d[3] ?? 255];
    }
  }
  throw invalidParameter('bg_color', 'a hex colour with 3, 4, 6 or 8 digits or a colour name', text);
}

function parseShadowOpacity(text: string, name: string): string {
  if (text.toLowerCase() === 'auto') return 'auto';
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 100)) throw invalidParameter(name.replace(/\[.*$/, ''), "an integer from 0 to 100 or 'auto'", text);
  return String(n);
}

/** `shadow_x`, `shadow_x[type]` (form) and `shadow_x: {type: …}` (JSON) → validated values. */
function readPerType(fields: RawFields, name: string, check: (text: string, field: string) => string): string | undefined {
  let plain: string | undefined;
  const whole = fields.get(name);
  if (whole !== null && typeof whole === 'object' && !Array.isArray(whole) && !isFilePart(whole)) {
    for (const [cls, value] of Object.entries(whole)) {
      checkClass(name, cls);
      const text = readText(new Map([[name, value as RawValue]]), name);
      if (text !== undefined) check(text, name);
    }
  } else {
    const text = readText(fields, name);
    if (text !== undefined) plain = check(text, name);
  }
  const prefix = `${name}[`;
  for (const key of fields.keys()) {
    if (!key.startsWith(prefix) || !key.endsWith(']')) continue;
    checkClass(name, key.slice(prefix.length, -1));
    const text = readText(fields, key);
    if (text !== undefined) check(text, name);
  }
  return plain;
}

function checkClass(name: string, cls: string): void {
  if (!FOREGROUND_CLASSES.has(cls.toLowerCase())) throw invalidParameter(name, `a foreground class (${[...FOREGROUND_CLASSES].join(', ')})`, cls);
}

// ---- sources -----------------------------------------------------------------------------------

/** Decode base64 (standard or URL-safe, optional data: URL prefix). Spaces are `+` lost to form decoding. */
export function decodeBase64(text: string): Uint8Array {
  const comma = text.startsWith('data:') ? text.indexOf(',') : -1;
  const payload = (comma >= 0 ? text.slice(comma + 1) : text).replace(/ /g, '+');
  return Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
}

function readUrl(fields: RawFields, name: 'image_url' | 'bg_image_url'): URL | undefined {
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

function readFile(fields: RawFields, name: 'image_file' | 'bg_image_file'): ImageSource | undefined {
  const v = fields.get(name);
  if (v === undefined || v === null || v === '') return undefined;
  if (isFilePart(v)) {
    if (v.data.byteLength === 0) return undefined;
    return { kind: 'bytes', field: name, data: v.data, filename: v.filename, type: v.type };
  }
  // JSON/urlencoded bodies cannot carry binary; a string here is a client mistake, not a file.
  throw invalidParameter(name, 'a file upload (multipart/form-data)', v);
}

/** Exactly one of image_file / image_file_b64 / image_url. Shared by /removebg and /improve. */
export function readImageSource(fields: RawFields): ImageSource {
  const given: ImageSource[] = [];
  const file = readFile(fields, 'image_file');
  if (file) given.push(file);
  const b64 = readText(fields, 'image_file_b64');
  if (b64 !== undefined) given.push({ kind: 'bytes', field: 'image_file_b64', data: decodeBase64(b64) });
  const url = readUrl(fields, 'image_url');
  if (url) given.push({ kind: 'url', field: 'image_url', url });
  if (given.length === 0) throw missingSource();
  if (given.length > 1) throw multipleSources(given.map((s) => s.field));
  return given[0]!;
}

// ---- the request -------------------------------------------------------------------------------

export function parseRemoveRequest(fields: RawFields): RemoveRequest {
  const source = readImageSource(fields);

  const bgColorText = readText(fields, 'bg_color');
  const bgUrl = readUrl(fields, 'bg_image_url');
  const bgFile = readFile(fields, 'bg_image_file');
  const bgGiven = [bgColorText !== undefined && 'bg_color', bgUrl && 'bg_image_url', bgFile && 'bg_image_file'].filter(
    (x): x is string => typeof x === 'string',
  );
  if (bgGiven.length > 1) throw multipleBgSources(bgGiven);

  const size = readEnum(fields, 'size', SIZES, 'preview');
  const format = readEnum(fields, 'format', FORMATS, 'auto');
  const channels = readEnum(fields, 'channels', CHANNELS, 'rgba');
  const crop = readBoolean(fields, 'crop', false);
  const cropMarginText = readText(fields, 'crop_margin');
  const cropMargin = cropMarginText === undefined ? undefined : parseCropMargin(cropMarginText);
  const scaleText = readText(fields, 'scale');
  const scale = scaleText === undefined ? undefined : parseScale(scaleText);
  const positionText = readText(fields, 'position');
  const position = positionText === undefined ? undefined : parsePosition(positionText);
  const roiText = readText(fields, 'roi');
  const roi = roiText === undefined ? undefined : parseRoi(roiText);

  const options: Omit<RemoveOptions, 'size' | 'bgImage'> = {
    format,
    channels,
    crop,
    refine: true,
    matting: true,
    decontaminate: true,
  };
  if (bgColorText !== undefined) options.bgColor = parseBgColor(bgColorText);
  if (crop && cropMargin) options.cropMargin = cropMargin; // crop_margin only applies with crop=true
  if (scale !== undefined) options.scale = scale;
  if (position !== undefined) options.position = position;
  if (roi !== undefined) options.roi = roi;

  const hints: RemoveRequest['hints'] = {
    type: readEnum(fields, 'type', TYPES, 'auto'),
    typeLevel: readEnum(fields, 'type_level', TYPE_LEVELS, '1'),
    semitransparency: readBoolean(fields, 'semitransparency', true),
    addShadow: readBoolean(fields, 'add_shadow', false),
  };
  const shadowType = readPerType(fields, 'shadow_type', (text) => {
    const hit = SHADOW_TYPES[text.toLowerCase() as keyof typeof SHADOW_TYPES];
    if (hit === undefined) throw invalidParameter('shadow_type', `one of ${Object.values(SHADOW_TYPES).join(', ')}`, text);
    return hit;
  });
  if (shadowType !== undefined) hints.shadowType = shadowType;
  const shadowOpacity = readPerType(fields, 'shadow_opacity', parseShadowOpacity);
  if (shadowOpacity !== undefined) hints.shadowOpacity = shadowOpacity;
  readEnum(fields, 'shadow_method', SHADOW_METHODS, 'latest'); // removed 2021-04-13: accepted, ignored

  const request: RemoveRequest = { source, size, options, hints };
  if (bgUrl) request.bgSource = { kind: 'url', field: 'bg_image_url', url: bgUrl };
  else if (bgFile) request.bgSource = bgFile;
  return request;
}

export interface ImproveRequest {
  source: ImageSource;
  tag?: string;
  filename?: string;
}

export function parseImproveRequest(fields: RawFields): ImproveRequest {
  const source = readImageSource(fields);
  const request: ImproveRequest = { source };
  const tag = readText(fields, 'tag');
  if (tag !== undefined) {
    if (tag.length > 200) throw invalidParameter('tag', 'at most 200 characters', tag);
    request.tag = tag;
  }
  const filename = readText(fields, 'image_filename');
  if (filename !== undefined) request.filename = filename.slice(0, 255);
  return request;
}

/** Does the Accept header ask for the JSON result (`{"data":{"result_b64":…}}`)? */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept
    .toLowerCase()
    .split(',')
    .some((range) => {
      const [type, ...params] = range.split(';').map((s) => s.trim());
      if (type !== 'application/json') return false;
      const q = params.find((p) => p.startsWith('q='));
      return q === undefined || Number(q.slice(2)) > 0;
    });
}
