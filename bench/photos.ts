// Benchmark photos: a small dev photo (read in place from ../shared/eval/dev) and large real photos
// from Debian's mate-backgrounds package (fetched with apt-get download into bench/.photos, ignored by git).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../src/model/manifest.js';

export interface Photo {
  name: string;
  file: string;
}

const CACHE = path.join(PACKAGE_ROOT, 'bench', '.photos');
const EVAL_DIR = process.env.CUTOUT_EVAL_DIR ?? path.resolve(PACKAGE_ROOT, '..', 'shared', 'eval', 'dev');

const MATE = {
  'ladybird-4mp': 'usr/share/backgrounds/mate/nature/LadyBird.jpg',
  'elephants-18mp': 'usr/share/backgrounds/mate/abstract/Elephants_5640x3172.jpg',
} as const;

function ensureMate(): string | null {
  const root = path.join(CACHE, 'mate');
  if (fs.existsSync(path.join(root, MATE['elephants-18mp']))) return root;
  fs.mkdirSync(CACHE, { recursive: true });
  try {
    execFileSync('apt-get', ['download', 'mate-backgrounds'], { cwd: CACHE, stdio: 'pipe' });
    const deb = fs.readdirSync(CACHE).find((f) => f.startsWith('mate-backgrounds') && f.endsWith('.deb'));
    if (!deb) return null;
    execFileSync('dpkg', ['-x', path.join(CACHE, deb), root], { stdio: 'pipe' });
    return root;
  } catch (err) {
    console.error(`bench: could not fetch mate-backgrounds (${(err as Error).message.split('\n')[0]}); large photos skipped`);
    return null;
  }
}

/**
 * The 18 MP photo is a progressive JPEG, whose entropy decoding alone takes ~0.5 s here and cannot
 * use shrink-on-load. Cameras write baseline JPEGs: this is the same photo at 12 MP, re-encoded
 * baseline at quality 92 (made once with sharp, cached beside the others).
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
  const mate = ensureMate();
  if (mate) {
    for (const [name, rel] of Object.entries(MATE)) photos.push({ name, file: path.join(mate, rel) });
    photos.push({ name: 'elephants-12mp-baseline', file: await ensureBaseline12mp(path.join(mate, MATE['elephants-18mp'])) });
  }
  return photos;
}
