// Shared fixtures for core tests: where the eval photos live, and synthetic images made with sharp.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { evalDir } from '../../src/quality/eval-dir.js';

/** ../shared/eval/dev beside the project root (research data: read in place, never copied). */
export const EVAL_DIR = evalDir();

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

/** Decoded RGBA pixels of an encoded image. */
export async function rgbaOf(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number; channels: number }> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}
