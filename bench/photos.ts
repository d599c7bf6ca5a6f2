// Benchmark photos: a small dev photo (read in place from ../shared/eval/dev) and large real photos
// from Debian packages (fetched with apt-get download into bench/.photos, ignored by git).
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import { debianFiles } from '../src/model/debian-files.js';
import { evalDir } from '../src/quality/eval-dir.js';

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
