// Adds lock entries for msgpackr-extract's platform packages that this registry mirror does not
// serve (darwin, win32, linux-arm). npm 11 then accepts the lock in `npm ci`; these entries are
// optional and for other platforms, so nothing is ever fetched for them here.
// Run after any `npm install` that rewrites package-lock.json: node .ci/lock-platform-stubs.mjs
import fs from 'node:fs';

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
if (!parent) process.exit(0);
const platforms = {
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'linux-arm': ['linux', 'arm'],
  'linux-arm64': ['linux', 'arm64'],
  'linux-x64': ['linux', 'x64'],
  'win32-x64': ['win32', 'x64'],
};
let added = 0;
for (const [name, version] of Object.entries(parent.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const suffix = name.split('msgpackr-extract-')[1];
  const [os, cpu] = platforms[suffix] ?? [];
  if (!os) continue;
  lock.packages[key] = { version, cpu: [cpu], license: 'MIT', optional: true, os: [os] };
  added++;
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
fs.writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: added ${added} entries`);
