// Where the addon is built: what the main thread may know of native/ (the pool checks the file is
// there, `npm run gpu` rebuilds it) without loading it. Only the workers load it (binding.ts).
import path from 'node:path';
import { PACKAGE_ROOT } from '../model/manifest.js';

export const ADDON_PATH = path.join(PACKAGE_ROOT, 'build', 'Release', 'cutout.node');
