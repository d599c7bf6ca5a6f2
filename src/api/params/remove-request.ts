// POST /v1.0/removebg's fields → a validated, normalised removal request (REMOVEBG-API.md §1). Pure.
// Each bad value gets remove.bg's per-parameter code; fields are checked in a fixed order, so the
// first bad one is the one reported.

import type { Channels, OutputFormat, RemoveOptions, RequestedSize } from '../../domain/removal.js';
import type { RawFields } from '../../http/fields.js';
import { multipleBgSources } from '../errors.js';
import { parseBgColor } from './color.js';
import { readCompatFields } from './compat.js';
import { readBoolean, readEnum, readText } from './fields.js';
import { parseCropMargin, parsePosition, parseRoi, parseScale } from './layout.js';
import { readFile, readImageSource, readUrl, type ImageSource } from './sources.js';

export interface RemoveRequest {
  source: ImageSource;
  bgSource?: ImageSource;
  size: RequestedSize;
  /** Everything but the size tier (decided by the ledger) and bg image bytes (fetched later). */
  options: Omit<RemoveOptions, 'size' | 'bgImage'>;
}

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

  const shadow = readCompatFields(fields);
  if (shadow !== undefined) options.shadow = shadow;

  const request: RemoveRequest = { source, size, options };
  if (bgUrl) request.bgSource = { kind: 'url', field: 'bg_image_url', url: bgUrl };
  else if (bgFile) request.bgSource = bgFile;
  return request;
}
