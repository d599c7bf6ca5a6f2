// Shared fixtures for core tests: the eval photos (read in place; tests that need them skip with
// EVAL_SKIP when they are absent), and synthetic images made with sharp.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { EVAL_DIR } from './eval-photos.js';

export { EVAL_DIR, EVAL_SKIP } from './eval-photos.js';

export function evalImage(id: string): Buffer {
  const manifest = readManifest();
  const row = manifest.find((r) => r.id === id);
  if (!row) throw new Error(`no eval item ${id}`);
  return fs.readFileSync(path.join(EVAL_DIR, row.image_path));
}

export interface EvalRow {
  id: string;
  image_path: string;
  gt_path: string;
  gt_type: 'alpha_matte' | 'binary_mask';
  trimap_path: string;
  category: string;
  dataset: string;
  width: number;
  height: number;
}

/** manifest.csv rows (quoted fields with commas handled). */
export function readManifest(): EvalRow[] {
  const text = fs.readFileSync(path.join(EVAL_DIR, 'manifest.csv'), 'utf8').trim();
  const [header, ...lines] = text.split('\n');
  const cols = splitCsv(header!);
  return lines.map((line) => {
    const cells = splitCsv(line);
    const row: Record<string, string | number> = {};
    cols.forEach((c, i) => (row[c] = cells[i] ?? ''));
    row.width = Number(row.width);
    row.height = Number(row.height);
    return row as unknown as EvalRow;
  });
}

function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** A photo-like synthetic scene: a bright disc on a darker gradient, at any size. */
export async function syntheticPhoto(width: number, height: number, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const r = Math.round(Math.min(width, height) * 0.3);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#334"/><stop offset="1" stop-color="#667"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <circle cx="${width / 2}" cy="${height / 2}" r="${r}" fill="#e83"/></svg>`;
  const img = sharp(Buffer.from(svg));
  return format === 'jpeg' ? img.jpeg({ quality: 85 }).toBuffer() : img.png().toBuffer();
}

/**
 * A figure left of the centre line (a head over a body that runs off the bottom edge) on a darker
 * gradient: a subject the model cuts out cleanly, where a mirror image or a quarter turn differs from
 * the original (syntheticPhoto's centred disc does not), and where the subject surely is is known
 * (figureRegion).
 */
export async function syntheticFigure(width: number, height: number, format: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const f = figureShapes(width, height);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#334"/><stop offset="1" stop-color="#667"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <ellipse cx="${f.body.cx}" cy="${f.body.cy}" rx="${f.body.rx}" ry="${f.body.ry}" fill="#c62"/>
    <circle cx="${f.head.cx}" cy="${f.head.cy}" r="${f.head.r}" fill="#e83"/></svg>`;
  const img = sharp(Buffer.from(svg));
  return format === 'jpeg' ? img.jpeg({ quality: 85 }).toBuffer() : img.png().toBuffer();
}

function figureShapes(width: number, height: number) {
  return {
    head: { cx: width * 0.4, cy: height * 0.3, r: height * 0.14 },
    body: { cx: width * 0.4, cy: height * 0.75, rx: width * 0.16, ry: height * 0.3 },
  };
}

/**
 * Where (x, y) lies in syntheticFigure(width, height): 'subject' or 'background' when every point
 * within `margin` pixels lies there too, else 'edge' (where a sound cut-out may go either way).
 */
export function figureRegion(width: number, height: number, x: number, y: number, margin: number): 'subject' | 'background' | 'edge' {
  const { head, body } = figureShapes(width, height);
  // Signed distances (pixels, negative inside); the ellipse's is scaled by its smaller radius, which
  // is never larger than the true distance, so the margin is kept.
  const inHead = Math.hypot(x - head.cx, y - head.cy) - head.r;
  const inBody = (Math.hypot((x - body.cx) / body.rx, (y - body.cy) / body.ry) - 1) * Math.min(body.rx, body.ry);
  const d = Math.min(inHead, inBody);
  return d <= -margin ? 'subject' : d >= margin ? 'background' : 'edge';
}

/** Decoded RGBA pixels of an encoded image. */
export async function rgbaOf(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}
