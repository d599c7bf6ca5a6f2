// Benchmark photos: a small dev photo (read in place from ../shared/eval/dev) and large real photos
// from Debian packages (fetched with apt-get download into bench/.photos, ignored by git).
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { debianFiles } from '../src/model/debian-files.js';
import { evalDir } from './quality/eval-dir.js';

export interface Photo {
  name: string;
  file: string;
}

const CACHE = path.join(PACKAGE_ROOT, 'bench', '.photos');
const EVAL_DIR = evalDir();

/** name → [Debian package, file inside it]. */
const LARGE: Record<string, [string, string]> = {
  'ladybird-4mp': ['mate-backgrounds', 'usr/share/backgrounds/mate/nature/LadyBird.jpg'],
  // Progressive JPEG: entropy decoding alone takes ~0.5 s and cannot use shrink-on-load.
  'elephants-18mp': ['mate-backgrounds', 'usr/share/backgrounds/mate/abstract/Elephants_5640x3172.jpg'],
  // A camera's baseline JPEG with EXIF (6028×3391), a bird on a tree trunk.
  'nuthatch-20mp': ['lomiri-wallpapers-20.04', 'usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg'],
};

/**
 * Cameras write baseline JPEGs: the 18 MP photo at 12 MP, re-encoded baseline at quality 92 (made
 * once with sharp, cached beside the others).
 */
async function ensureBaseline12mp(source: string): Promise<string> {
  const file = path.join(CACHE, 'elephants-12mp-baseline.jpg');
  if (!fs.existsSync(file)) {
    const sharp = (await import('sharp')).default;
    await sharp(source).resize(4620, 2598).jpeg({ quality: 92, progressive: false, chromaSubsampling: '4:2:0' }).toFile(file);
  }
  return file;
}

export async function benchPhotos(): Promise<Photo[]> {
  const photos: Photo[] = [];
  const small = path.join(EVAL_DIR, 'images', 'am_GT04.png');
  if (fs.existsSync(small)) photos.push({ name: 'dev-am_GT04-0.45mp', file: small });
  for (const [name, [pkg, file]] of Object.entries(LARGE)) {
    try {
      photos.push({ name, file: debianFiles(CACHE, pkg, [file])[0]! });
    } catch (err) {
      console.error(`bench: ${name} skipped (${(err as Error).message})`);
    }
  }
  const elephants = photos.find((p) => p.name === 'elephants-18mp');
  if (elephants) photos.push({ name: 'elephants-12mp-baseline', file: await ensureBaseline12mp(elephants.file) });
  return photos;
}

export interface SizedPhoto extends Photo {
  /** The size asked for (e.g. '0.5', '4'), in megapixels. */
  size: string;
  width: number;
  height: number;
}

/**
 * A photo of about `megapixels`, made once from `source` with sharp (same aspect ratio, baseline
 * JPEG at quality 92, as a camera or phone would send it) and cached in bench/.photos.
 */
async function ensureSizedVariant(source: string, name: string, megapixels: number): Promise<string> {
  const file = path.join(CACHE, `${name}.jpg`);
  if (!fs.existsSync(file)) {
    const sharp = (await import('sharp')).default;
    const { width, height } = (await sharp(source).metadata()).autoOrient;
    const k = Math.sqrt((megapixels * 1e6) / (width * height));
    if (k > 1) throw new Error(`${path.basename(source)} is smaller than ${megapixels} MP`);
    fs.mkdirSync(CACHE, { recursive: true });
    await sharp(source)
      .rotate()
      .resize(Math.round(width * k), Math.round(height * k))
      .jpeg({ quality: 92, progressive: false, chromaSubsampling: '4:2:0' })
      .toFile(file);
  }
  return file;
}

const largePhoto = (name: string): string => {
  const [pkg, file] = LARGE[name]!;
  return debianFiles(CACHE, pkg, [file])[0]!;
};

/**
 * bench:gpu's photos by size in megapixels: '0.5' the dev photo (0.45 MP PNG), '4' the ladybird
 * (4.1 MP), '12' the baseline elephants (12.0 MP), '20' the nuthatch (20.4 MP, a camera's JPEG);
 * any other size (e.g. '1', '8') is made from the nuthatch at exactly that size. Cached files are
 * used without their sources, so a copy of bench/.photos works where apt cannot reach Debian.
 */
export async function sizedBenchPhotos(sizes: string[]): Promise<SizedPhoto[]> {
  const sharp = (await import('sharp')).default;
  const out: SizedPhoto[] = [];
  for (const size of sizes) {
    const mp = Number(size);
    if (!(mp > 0)) throw new Error(`Expected a size in megapixels but received '${size}'`);
    let photo: Photo;
    if (size === '0.5') photo = { name: 'dev-am_GT04-0.45mp', file: path.join(EVAL_DIR, 'images', 'am_GT04.png') };
    else if (size === '4') photo = { name: 'ladybird-4mp', file: largePhoto('ladybird-4mp') };
    else if (size === '20') photo = { name: 'nuthatch-20mp', file: largePhoto('nuthatch-20mp') };
    else if (size === '12') {
      const cached = path.join(CACHE, 'elephants-12mp-baseline.jpg');
      photo = { name: 'elephants-12mp-baseline', file: fs.existsSync(cached) ? cached : await ensureBaseline12mp(largePhoto('elephants-18mp')) };
    } else {
      const name = `nuthatch-${size}mp`;
      const cached = path.join(CACHE, `${name}.jpg`);
      photo = { name, file: fs.existsSync(cached) ? cached : await ensureSizedVariant(largePhoto('nuthatch-20mp'), name, mp) };
    }
    const { width, height } = (await sharp(photo.file).metadata()).autoOrient;
    out.push({ ...photo, size, width, height });
  }
  return out;
}

/**
 * benchPhotos by name (all of them without `names`), where a name may also be one of
 * sizedBenchPhotos' variants, 'nuthatch-<N>mp' (e.g. 'nuthatch-1mp': a phone-sized JPEG).
 */
export async function namedBenchPhotos(names?: string[]): Promise<Photo[]> {
  const photos = (await benchPhotos()).filter((p) => !names || names.includes(p.name));
  for (const name of names ?? []) {
    const sized = /^nuthatch-(\d+(?:\.\d+)?)mp$/.exec(name);
    if (sized && !photos.some((p) => p.name === name)) photos.push(...(await sizedBenchPhotos([sized[1]!])));
  }
  return photos;
}
