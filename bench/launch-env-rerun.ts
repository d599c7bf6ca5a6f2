// Benches that time this process's own allocations (photo-stages, compare) run in the
// environment a checkout's bin/cutout gives node (src/process/launch-env.ts: malloc's big blocks on
// huge pages), as the service runs. glibc reads GLIBC_TUNABLES only when a process starts, so where the
// caller has not set it the bench starts itself again with it and exits with that run's status. A
// GLIBC_TUNABLES the caller set (even empty) is kept: that is how to measure without.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchEnv } from '../src/process/launch-env.js';

/** The environment `root`'s bin/cutout gives node (older checkouts without launch-env.js: `env` as is). */
export async function launchEnvOf(root: string, env: NodeJS.ProcessEnv = process.env): Promise<NodeJS.ProcessEnv> {
  const file = path.join(root, 'dist', 'src', 'process', 'launch-env.js');
  if (!fs.existsSync(file)) return env;
  const mod = (await import(pathToFileURL(file).href)) as { launchEnv?: (env?: NodeJS.ProcessEnv) => NodeJS.ProcessEnv };
  return mod.launchEnv ? mod.launchEnv(env) : env;
}

/** Where GLIBC_TUNABLES is unset: runs this bench again in the launch environment (of `root`, else this checkout's) and exits. */
export async function rerunInLaunchEnv(root?: string): Promise<void> {
  if (process.env.GLIBC_TUNABLES !== undefined) return;
  const env = root ? await launchEnvOf(root) : launchEnv();
  if (env.GLIBC_TUNABLES === undefined) return; // an old checkout with no tunables of its own
  const run = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { env, stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
