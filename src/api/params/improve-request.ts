// POST /v1.0/improve's fields → the image source, its tag and file name (REMOVEBG-API.md §5). Pure.

import type { RawFields } from '../../http/fields.js';
import { invalidParameter } from '../errors.js';
import { readText } from './fields.js';
import { readImageSource, type ImageSource } from './sources.js';

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
