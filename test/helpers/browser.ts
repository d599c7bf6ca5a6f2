// Headless Chromium for page tests: Debian's /usr/bin/chromium driven by playwright-core (which
// downloads no browser of its own). A browser that cannot start fails the test: there is no skip.
// The flags keep Chromium off the network (no component updates, no sync, no QUIC probes), and
// each launch gets a fresh profile folder.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import type { Test } from 'tap';

export const CHROMIUM_PATH = process.env.CUTOUT_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A persistent context on a fresh --user-data-dir (playwright passes the profile folder itself;
 * launchPersistentContext is how it takes one), closed and removed at the test's end.
 */
export async function launchBrowser(t: Test, options: { viewport?: { width: number; height: number } } = {}): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'cutout-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
      headless: true,
      acceptDownloads: true,
      viewport: options.viewport ?? { width: 1100, height: 1400 },
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`Chromium did not start from ${CHROMIUM_PATH} (install Debian's chromium package: apt-get install -y chromium): ${(err as Error).message}`);
  }
  t.teardown(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

export type { BrowserContext };
