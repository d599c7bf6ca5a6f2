// The demo page's other ways in, in headless Chromium: a photo dropped on the drop zone, a photo
// pasted, an image URL (the server fetches it: the request carries `image_url`, and the original is
// shown beside the cut-out from that URL), and a URL pasted outside the fields. The fake pool echoes
// the upload, so each check is about what the page sent and showed, not about the model.

import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { startImageHost } from '../helpers/image-host.js';
import { makeImage } from '../helpers/images.js';
import { KEY, startTestServer } from '../helpers/server.js';

declare const document: any; // page-side code; the project compiles without the DOM lib
declare const DataTransfer: any;
declare const File: any;
declare const DragEvent: any;
declare const ClipboardEvent: any;

const png = await makeImage('png', 96, 64);

async function openPage(t: Test, withUrlFetch = false) {
  const { url, pool } = await startTestServer(t, withUrlFetch ? { fetchOptions: { allowLoopback: true } } : {});
  const context = await launchBrowser(t);
  context.setDefaultTimeout(120_000); // a hang guard, not an assertion
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}/`);
  await page.fill('#key-input', KEY);
  return { url, pool, page, errors };
}

/** Fire `type` with a DataTransfer holding the PNG (as a browser does for a drop or a paste). */
function fireWithFile(page: Page, selector: string, type: 'drop' | 'paste', base64: string) {
  return page.evaluate(
    ([sel, kind, b64]) => {
      const bytes = Uint8Array.from(atob(b64!), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'dropped.png', { type: 'image/png' }));
      const target = document.querySelector(sel);
      const event =
        kind === 'drop'
          ? new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true })
          : new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true });
      target.dispatchEvent(event);
    },
    [selector, type, base64],
  );
}
declare function atob(s: string): string;

t.test('a dropped photo is sent and shown', async (t) => {
  const { url, pool, page, errors } = await openPage(t);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg`);
  await fireWithFile(page, '#drop-zone', 'drop', png.toString('base64'));
  t.equal((await answered).status(), 200);
  await page.waitForSelector('#result:not([hidden])');
  t.ok(Buffer.from(pool.tasks[0]!.input).equals(png), 'the dropped bytes reached the pool');
  t.same(await page.$eval('#result-canvas', (c: any) => [c.width, c.height]), [96, 64]);
  t.same(errors, []);
});

t.test('a pasted photo is sent and shown', async (t) => {
  const { url, pool, page, errors } = await openPage(t);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg`);
  await fireWithFile(page, 'body', 'paste', png.toString('base64'));
  t.equal((await answered).status(), 200);
  await page.waitForSelector('#result:not([hidden])');
  t.ok(Buffer.from(pool.tasks[0]!.input).equals(png), 'the pasted bytes reached the pool');
  t.same(errors, []);
});

t.test('an image URL: the server fetches it; the original is shown from it', async (t) => {
  const host = await startImageHost(t);
  host.set('/photo.png', png);
  const { url, pool, page, errors } = await openPage(t, true);
  await page.fill('#url-input', `${host.url}/photo.png`);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg`);
  await page.press('#url-input', 'Enter'); // the keyboard submits the form
  t.equal((await answered).status(), 200);
  await page.waitForSelector('#result:not([hidden])');
  t.ok(Buffer.from(pool.tasks[0]!.input).equals(png), 'the server fetched the URL');
  t.equal(host.hits.filter((p) => p === '/photo.png').length, 2, 'fetched twice: by the server, and by the page for the original');
  t.equal(await page.$eval('#before', (img: any) => img.naturalWidth), 96, 'the original is shown');
  t.equal(await page.$eval('#slider', (s: any) => s.disabled), false, 'and can be compared');
  t.same(errors, []);
});

t.test('a URL pasted outside the fields is sent as image_url', async (t) => {
  const host = await startImageHost(t);
  host.set('/pasted.png', png);
  const { url, pool, page } = await openPage(t, true);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg`);
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.setData('text/plain', text);
    document.body.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  }, `${host.url}/pasted.png`);
  t.equal((await answered).status(), 200);
  await page.waitForSelector('#result:not([hidden])');
  t.equal(await page.inputValue('#url-input'), `${host.url}/pasted.png`, 'the URL shows in its field');
  t.ok(Buffer.from(pool.tasks[0]!.input).equals(png));
});
