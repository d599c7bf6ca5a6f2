// The demo page at / in headless Chromium (Debian's, via playwright-core) against a server with the
// real model: a generated photo of a figure picked through the file input, the cut-out's pixels read
// back from the page's canvas (transparent where the figure surely is not, opaque where it surely is),
// the download (the PNG the server sent, at the photo's size; then with a colour painted
// in), the sandbox without a key (preview size, nothing charged), an API error shown from errors[],
// the size and timing headers, the shadow control (drawn in the page over the cut-out it holds: the
// pixels below and beside the subject, never the subject, as the addon draws them, no new request),
// phone width, keyboard and labels.
// Screenshots: test/.artifacts/demo-*.png (git-ignored). A browser that cannot start fails the test.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { loadBinding } from '../../src/native/binding.js';
import { launchBrowser } from '../helpers/browser.js';
import { figureRegion, syntheticFigure } from '../helpers/core-fixtures.js';
import { tryRealPool } from '../helpers/real.js';
import { KEY, startTestServer } from '../helpers/server.js';

// Code in page.evaluate() runs in the browser; the project compiles without the DOM lib, so its
// globals are declared here, untyped, for this file only.
declare const document: any;
declare const window: any;
declare function getComputedStyle(el: unknown): any;
type HTMLElement = any;
type HTMLInputElement = any;
type HTMLCanvasElement = any;

const ARTIFACTS = new URL('../../../test/.artifacts/', import.meta.url).pathname;
mkdirSync(ARTIFACTS, { recursive: true });

// A figure the size of a DAVIS frame (0.41 MP), drawn here: where it surely is, and is not, is known.
const PHOTO_ID = 'figure';
const PHOTO_DIR = mkdtempSync(join(tmpdir(), 'cutout-demo-'));
t.teardown(() => rmSync(PHOTO_DIR, { recursive: true, force: true }));
const photoPath = join(PHOTO_DIR, `${PHOTO_ID}.jpg`);
writeFileSync(photoPath, await syntheticFigure(854, 480));

/**
 * Grid points whose whole neighbourhood of `radius` pixels is background, or subject: far enough from
 * every edge that any sound cut-out must agree there.
 */
function surePoints(width: number, height: number, radius = 12, step = 7): { background: number[][]; subject: number[][] } {
  const background: number[][] = [];
  const subject: number[][] = [];
  for (let y = radius; y < height - radius; y += step) {
    for (let x = radius; x < width - radius; x += step) {
      const region = figureRegion(width, height, x, y, radius);
      if (region === 'background') background.push([x, y]);
      else if (region === 'subject') subject.push([x, y]);
    }
  }
  return { background, subject };
}

/** Alpha (or all four channels) of the page's result canvas at the given points. */
function canvasPixels(page: Page, points: number[][]): Promise<number[][]> {
  return page.evaluate((pts) => {
    const canvas = document.getElementById('result-canvas') as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    return pts.map(([x, y]) => Array.from(data.subarray((y! * canvas.width + x!) * 4, (y! * canvas.width + x!) * 4 + 4)));
  }, points);
}

/** The whole of the result canvas, RGBA as getImageData gives it (sent back as base64). */
async function canvasRgba(page: Page): Promise<Buffer> {
  const b64 = await page.evaluate(() => {
    const canvas = document.getElementById('result-canvas') as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let text = '';
    for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return (window as any).btoa(text) as string;
  });
  return Buffer.from(b64, 'base64');
}

/** After the page's next two frames: a redraw asked for in one has been painted. */
const afterFrames = (page: Page) =>
  page.evaluate(() => new Promise((done) => (window as any).requestAnimationFrame(() => (window as any).requestAnimationFrame(done))));

const share = (values: number[], pass: (v: number) => boolean) => values.filter(pass).length / values.length;

/** Every request the page makes, to prove it stays on this server (blob: and data: are the page's own). */
function watchRequests(page: Page, origin: string): string[] {
  const foreign: string[] = [];
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(`${origin}/`) && !u.startsWith('blob:') && !u.startsWith('data:')) foreign.push(u);
  });
  return foreign;
}

/** Script errors and console errors, less the browser's own line for a 4xx we asked for. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return errors;
}

const real = await tryRealPool({ workers: 1 });
if ('skip' in real) throw new Error(`the demo page test needs the real pool: ${real.skip}`);
const pool = real.pool;
t.teardown(() => pool.close());

/**
 * A server with the real pool and the demo page open in a fresh browser, watched for foreign
 * requests and script errors.
 */
async function openDemo(t: Test, viewport?: { width: number; height: number }) {
  const { url, ledger } = await startTestServer(t, { pool: pool as never });
  const context = await launchBrowser(t, viewport && { viewport });
  context.setDefaultTimeout(300_000); // a hang guard on a loaded machine, not an assertion
  const page = await context.newPage();
  const foreign = watchRequests(page, url);
  const errors = watchErrors(page);
  await page.goto(`${url}/`);
  return { url, ledger, page, foreign, errors };
}

/** How many pixels' alpha differ by more than one level between two RGBA buffers of one size. */
function alphaApart(a: Uint8Array, b: Uint8Array): number {
  let apart = 0;
  for (let i = 3; i < a.length; i += 4) if (Math.abs(a[i]! - b[i]!) > 1) apart++;
  return apart;
}

const photoMeta = await sharp(photoPath).metadata();
const truth = surePoints(photoMeta.width!, photoMeta.height!);

t.test('a photo with a key: the cut-out, its pixels, headers, download, background colour', async (t) => {
  t.ok(truth.background.length > 100 && truth.subject.length > 30, `sure points: ${truth.background.length} background, ${truth.subject.length} subject`);

  const { url, ledger, page, foreign, errors } = await openDemo(t);
  await page.fill('#key-input', KEY);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg` && r.request().method() === 'POST');
  await page.setInputFiles('#file-input', photoPath);
  const response = await answered;
  t.equal(response.status(), 200, 'the keyed endpoint answered 200');
  t.equal(response.request().headers()['x-api-key'], KEY, 'with the key in X-Api-Key');
  const served = await response.body();
  await page.waitForSelector('#result:not([hidden])');

  // The canvas holds the server's PNG at full size: transparent background, opaque subject.
  const size = await page.evaluate(() => {
    const c = document.getElementById('result-canvas') as HTMLCanvasElement;
    return [c.width, c.height];
  });
  t.same(size, [photoMeta.width, photoMeta.height], 'size=full: the photo size (0.41 MP; preview would give at most 0.25 MP)');
  const bg = (await canvasPixels(page, truth.background)).map((p) => p[3]!);
  const fg = (await canvasPixels(page, truth.subject)).map((p) => p[3]!);
  const bgClear = share(bg, (a) => a <= 16);
  const fgSolid = share(fg, (a) => a >= 240);
  t.comment(`background points with alpha ≤ 16: ${(bgClear * 100).toFixed(1)}%; subject points with alpha ≥ 240: ${(fgSolid * 100).toFixed(1)}%`);
  t.ok(bgClear >= 0.98, 'the background is transparent');
  t.ok(fgSolid >= 0.98, 'the subject is opaque');

  // The size and timing headers, as the page shows them.
  const fact = (name: string) => page.textContent(`#facts dd[data-header="${name}"]`);
  t.match(await fact('X-Width'), new RegExp(`^${photoMeta.width} × ${photoMeta.height} px, \\d+\\.\\d+ (KB|MB)$`), 'X-Width × X-Height and the PNG size');
  t.equal(await fact('X-Processing-Time-Ms'), `${response.headers()['x-processing-time-ms']} ms`);
  t.equal(await fact('X-Credits-Charged'), response.headers()['x-credits-charged']);
  // The stages from Server-Timing in a reader's words; the header keeps its names (the dd's title shows it).
  const stages = (await fact('Server-Timing'))!;
  const sent = response.headers()['server-timing']!;
  t.match(sent, /(^|, )infer;dur=/, 'the header names the stages as the tools read them');
  t.match(stages, /^[A-Z]/, 'capitalised');
  const parts = stages.split(' · ');
  const label = (part: string) => part.replace(/ \d+ ms$/, '').toLowerCase();
  t.ok(parts.map(label).includes('waiting in line'), `the queue (${stages})`);
  t.ok(parts.map(label).includes('finding the subject'), 'the model run');
  t.ok(parts.map(label).includes('saving the image'), 'the encode');
  t.ok(
    parts.every((p) => / \d+ ms$/.test(p)),
    'every stage with its milliseconds',
  );
  const names = sent.split(',').map((e) => e.trim().split(';')[0]!);
  t.equal(parts.length, names.length, 'one part per stage sent');
  for (const name of names.filter((n) => n !== 'total'))
    t.notOk(
      parts.some((p) => label(p) === name.toLowerCase()),
      `no internal name: ${name}`,
    );
  t.equal(await page.getAttribute('#facts dd[data-header="Server-Timing"]', 'title'), `Server-Timing: ${sent}`, 'the header as sent, on hover');
  const box = (n: string) => response.headers()[`x-foreground-${n}`];
  t.equal(
    await fact('X-Foreground-Width'),
    `${box('width')} × ${box('height')} px at (${box('left')}, ${box('top')}), in the original photo's pixels`,
    'the subject box, said to be in the original photo',
  );
  t.match(await page.textContent('#status'), new RegExp(`^Done: ${photoMeta.width} × ${photoMeta.height} px in \\d+ ms\\.$`));
  const account = ledger.accountOf(KEY)!;
  t.equal(ledger.balancesNow(account.id).total, 99, 'one credit charged to the key');

  await page.screenshot({ path: join(ARTIFACTS, 'demo-desktop.png'), fullPage: true });

  // Download, transparent: the bytes the server sent.
  const [plain] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  t.equal(plain.suggestedFilename(), `${PHOTO_ID}-cutout.png`);
  const plainFile = join(ARTIFACTS, 'download-transparent.png');
  await plain.saveAs(plainFile);
  const plainBytes = readFileSync(plainFile);
  t.ok(plainBytes.equals(served), 'the download is the PNG the server sent');
  const plainMeta = await sharp(plainBytes).metadata();
  t.same([plainMeta.format, plainMeta.width, plainMeta.height, plainMeta.hasAlpha], ['png', photoMeta.width, photoMeta.height, true]);

  // A background colour: painted behind the cut-out in the page, then into the downloaded pixels.
  await page.fill('#bg-color', '#ff0000');
  t.equal(await page.isChecked('input[name="bg"][value="color"]'), true, 'picking a colour selects it');
  t.equal(await page.$eval('#after', (el) => getComputedStyle(el).backgroundColor), 'rgb(255, 0, 0)', 'shown behind the cut-out');
  const [colored] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const coloredFile = join(ARTIFACTS, 'download-red.png');
  await colored.saveAs(coloredFile);
  const { data, info } = await sharp(coloredFile).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  t.same([info.width, info.height], [photoMeta.width, photoMeta.height], 'the coloured PNG has the photo size');
  const px = ([x, y]: number[]) => Array.from(data.subarray((y! * info.width + x!) * 4, (y! * info.width + x!) * 4 + 4));
  t.ok(
    share(
      truth.background.map((p) => (px(p).join() === '255,0,0,255' ? 1 : 0)),
      (v) => v === 1,
    ) >= 0.98,
    'the background is opaque red',
  );
  t.ok(
    share(
      truth.subject.map((p) => px(p)[3]!),
      (a) => a === 255,
    ) === 1,
    'the subject is opaque',
  );
  await page.check('input[name="bg"][value="transparent"]');
  t.equal(await page.$eval('#after', (el) => el.classList.contains('checkerboard')), true, 'back to the checkerboard');

  // The slider moves the split, by keyboard.
  await page.focus('#slider');
  await page.keyboard.press('Home');
  t.equal(await page.$eval('#compare', (el) => (el as HTMLElement).style.getPropertyValue('--split')), '0%', 'Home: all original');
  await page.keyboard.press('ArrowRight');
  t.equal(await page.$eval('#slider', (el) => (el as HTMLInputElement).value), '1', 'an arrow key moves it');

  t.same(foreign, [], 'no request left this server');
  t.same(errors, [], 'no script or console errors');
});

// The figure again, standing on a floor: the photo continues 200 rows below its body, so that a
// shadow cast on the ground (3D, car) has room in the picture.
const FLOOR = 200;
const standingPath = join(PHOTO_DIR, 'standing.jpg');
writeFileSync(
  standingPath,
  await sharp(await sharp(photoPath).extend({ bottom: FLOOR, background: '#666677' }).png().toBuffer())
    .jpeg({ quality: 85 })
    .toBuffer(),
);

t.test('shadows: drawn by the page over the cut-out it holds, below and beside the subject, never on it, no new request', async (t) => {
  const binding = loadBinding();
  const { ledger, page, foreign, errors } = await openDemo(t);
  let posts = 0;
  page.on('request', (r) => {
    if (r.method() === 'POST') posts++;
  });
  await page.fill('#key-input', KEY);
  await page.setInputFiles('#file-input', standingPath);
  await page.waitForSelector('#result:not([hidden])');
  const [w, h] = await page.evaluate(() => {
    const c = document.getElementById('result-canvas') as HTMLCanvasElement;
    return [c.width, c.height];
  });
  t.same([w, h], [photoMeta.width, photoMeta.height! + FLOOR], 'the standing figure at full size');
  const base = await canvasRgba(page);

  // The subject as the cut-out has it: its box, and where its lowest opaque row (the ground) is.
  let [left, top, right, bottom] = [w, h, -1, -1];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (base[(y * w + x) * 4 + 3]! >= 128) [left, top, right, bottom] = [Math.min(left, x), Math.min(top, y), Math.max(right, x), Math.max(bottom, y)];
  t.ok(bottom > 0 && bottom < h - FLOOR / 2, `the subject (${left}..${right} × ${top}..${bottom}) stands clear of the bottom edge`);
  const subjectHeight = bottom - top + 1;
  t.equal(await page.isChecked('input[name="shadow"][value="none"]'), true, 'no shadow until one is picked');

  for (const [type, autoOpacity] of [
    ['drop', 50],
    ['3D', 50],
    ['car', 90],
  ] as const) {
    await page.check(`input[name="shadow"][value="${type}"]`);
    await afterFrames(page);
    t.equal(await page.inputValue('#shadow-opacity'), String(autoOpacity), `${type}: opacity auto, as remove.bg has it (${autoOpacity})`);
    t.equal(await page.textContent('#shadow-opacity-value'), `${autoOpacity}%`);
    const shown = await canvasRgba(page);

    let subjectTouched = 0;
    let gained = 0;
    let sumX = 0;
    let sumY = 0;
    let highest = h;
    let below = 0;
    let darkest = 0;
    for (let i = 0; i < base.length; i += 4) {
      if (base[i + 3] === 255) {
        if (base.compare(shown, i, i + 4, i, i + 4) !== 0) subjectTouched++;
        continue;
      }
      if (shown[i + 3]! <= base[i + 3]! + 2) continue;
      const p = i / 4;
      gained++;
      sumX += p % w;
      sumY += Math.floor(p / w);
      highest = Math.min(highest, Math.floor(p / w));
      if (Math.floor(p / w) > bottom) below++;
      if (base[i + 3] === 0) darkest = Math.max(darkest, shown[i + 3]!);
    }
    const [cx, cy] = [sumX / gained, sumY / gained];
    t.comment(
      `${type}: ${gained} pixels darkened, centred at (${cx.toFixed(0)}, ${cy.toFixed(0)}), the highest at row ${highest}, ${below} below the ground, darkest alpha ${darkest}`,
    );
    t.equal(subjectTouched, 0, `${type}: every opaque pixel of the subject keeps its bytes`);
    t.ok(gained > 2000, `${type}: a shadow was drawn`);
    t.ok(darkest <= Math.round(2.55 * autoOpacity) && darkest >= 0.5 * 2.55 * autoOpacity, `${type}: its darkest alpha (${darkest}) is set by the opacity`);
    if (type === 'drop') {
      t.ok(cx > (left + right) / 2 && cy > (top + bottom) / 2, `drop: behind the subject, down and to the right`);
    } else {
      // 3D lies on the ground before the subject; car is darkest at the ground, fading up into the gap under the body.
      if (type === '3D') t.ok(cy > bottom, '3D: on the ground below the subject');
      else t.ok(cy > bottom - subjectHeight / 8 && below > 1000, 'car: at the ground, under the subject and below it');
      t.ok(highest >= bottom - subjectHeight / 4, `${type}: nothing above the lowest quarter of the subject`);
    }

    // What the service would draw: the addon over the same cut-out.
    const byAddon = Uint8Array.from(base);
    binding.drawShadow(byAddon, w, h, { type, opacity: autoOpacity });
    t.equal(alphaApart(byAddon, shown), 0, `${type}: the alpha the addon draws, within a level`);
  }

  // An opacity the user sets stays when the kind changes; 0 shows the cut-out as it came.
  await page.$eval('#shadow-opacity', (el) => {
    (el as HTMLInputElement).value = '30';
    el.dispatchEvent(new (window as any).Event('input', { bubbles: true }));
  });
  await page.check('input[name="shadow"][value="3D"]');
  await afterFrames(page);
  t.equal(await page.inputValue('#shadow-opacity'), '30', 'a chosen opacity is kept across kinds');
  const at30 = await canvasRgba(page);
  const byAddon = Uint8Array.from(base);
  binding.drawShadow(byAddon, w, h, { type: '3D', opacity: 30 });
  t.equal(alphaApart(byAddon, at30), 0, '3D at 30: the alpha the addon draws');

  // The download carries the shadow as shown.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const file = join(ARTIFACTS, 'download-shadow-3D.png');
  await download.saveAs(file);
  const saved = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  t.same([saved.info.width, saved.info.height], [w, h], 'the download has the cut-out size');
  t.equal(alphaApart(saved.data, at30), 0, 'the downloaded PNG holds the shadow shown');
  await page.screenshot({ path: join(ARTIFACTS, 'demo-shadow.png'), fullPage: true });

  await page.$eval('#shadow-opacity', (el) => {
    (el as HTMLInputElement).value = '0';
    el.dispatchEvent(new (window as any).Event('input', { bubbles: true }));
  });
  await afterFrames(page);
  t.ok((await canvasRgba(page)).equals(base), 'opacity 0: the cut-out as it came');
  await page.$eval('#shadow-opacity', (el) => {
    (el as HTMLInputElement).value = '60';
    el.dispatchEvent(new (window as any).Event('input', { bubbles: true }));
  });
  await page.check('input[name="shadow"][value="none"]');
  await afterFrames(page);
  t.ok((await canvasRgba(page)).equals(base), 'none: the cut-out as it came');
  const [plain] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const plainFile = join(ARTIFACTS, 'download-no-shadow.png');
  await plain.saveAs(plainFile);
  const plainRgba = await sharp(plainFile).ensureAlpha().raw().toBuffer();
  t.equal(alphaApart(plainRgba, base), 0, 'no shadow: the download is the cut-out as sent');

  t.equal(posts, 1, 'one request in all: the shadows cost none');
  t.equal(ledger.balancesNow(ledger.accountOf(KEY)!.id).total, 99, 'and one credit');
  t.same(foreign, []);
  t.same(errors, []);
});

t.test('without a key: the sandbox, at preview size, free', async (t) => {
  const { url, ledger, page, foreign, errors } = await openDemo(t);
  const answered = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.setInputFiles('#file-input', photoPath);
  const response = await answered;
  t.equal(response.url(), `${url}/sandbox/v1.0/removebg`, 'the sandbox endpoint');
  t.equal(response.request().headers()['x-api-key'], undefined, 'no key sent');
  t.equal(response.status(), 200);
  await page.waitForSelector('#result:not([hidden])');
  const [w, h] = await page.evaluate(() => {
    const c = document.getElementById('result-canvas') as HTMLCanvasElement;
    return [c.width, c.height];
  });
  t.ok(w * h <= 250_000 && w < photoMeta.width!, `preview size: ${w} × ${h}`);
  t.equal(Math.round((w / h) * 100), Math.round((photoMeta.width! / photoMeta.height!) * 100), 'the aspect kept');
  t.equal(await page.textContent('#facts dd[data-header="X-Credits-Charged"]'), '0', 'X-Credits-Charged: 0 shown');
  t.equal(await page.textContent('#facts dd:first-of-type'), 'POST /sandbox/v1.0/removebg');
  const box = /^(\d+) × (\d+) px at \((\d+), (\d+)\), in the original photo's pixels$/.exec(
    (await page.textContent('#facts dd[data-header="X-Foreground-Width"]')) ?? '',
  );
  t.ok(box, 'the subject box is labelled as in the original photo');
  if (box)
    t.ok(
      Number(box[1]) + Number(box[3]) <= photoMeta.width! && Number(box[2]) + Number(box[4]) <= photoMeta.height!,
      `within the original ${photoMeta.width} × ${photoMeta.height}`,
    );
  // The cut-out holds at preview scale too: the sure points, scaled, are clear and solid.
  const scale = (pts: number[][]) => pts.map(([x, y]) => [Math.floor((x! * w) / photoMeta.width!), Math.floor((y! * h) / photoMeta.height!)]);
  const bg = (await canvasPixels(page, scale(truth.background))).map((p) => p[3]!);
  const fg = (await canvasPixels(page, scale(truth.subject))).map((p) => p[3]!);
  t.ok(share(bg, (a) => a <= 16) >= 0.98, 'the background is transparent');
  t.ok(share(fg, (a) => a >= 240) >= 0.98, 'the subject is opaque');
  const account = ledger.accountOf(KEY)!;
  t.equal(ledger.balancesNow(account.id).total, 100, 'no key, no credit moved');
  t.same(foreign, []);
  t.same(errors, []);
});

t.test('errors: the API errors[] message is shown', async (t) => {
  const { url, page, errors } = await openDemo(t);

  await page.fill('#key-input', 'not-a-key');
  await page.setInputFiles('#file-input', photoPath);
  await page.waitForSelector('#error:not([hidden])');
  t.equal(await page.textContent('#error-title'), 'API Key invalid', 'errors[0].title');
  t.equal(await page.textContent('#error-detail'), 'The API key given in the X-Api-Key header is not valid. (auth_failed, HTTP 403)', 'detail and code');
  t.equal(await page.isHidden('#result'), true, 'no result');
  t.equal(await page.textContent('#status'), 'Failed.');

  await page.fill('#key-input', KEY);
  const answered = page.waitForResponse((r) => r.url() === `${url}/v1.0/removebg`);
  await page.setInputFiles('#file-input', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a photo\n') });
  t.equal((await answered).status(), 400);
  await page.waitForFunction(() => document.getElementById('error-title')!.textContent === 'Invalid file type');
  t.match(await page.textContent('#error-detail'), /^Expected jpg\/png\/webp, received .+ \(invalid_file_type, HTTP 400\)$/);
  await page.screenshot({ path: join(ARTIFACTS, 'demo-error.png'), fullPage: true });

  await page.fill('#url-input', 'ftp://example.com/a.jpg');
  await page.click('#url-submit');
  t.equal(await page.textContent('#error-title'), 'Not an image URL', 'checked before sending');
  t.same(errors, []);
});

t.test('phone width: no sideways scrolling, every control labelled, reachable by Tab', async (t) => {
  const { page } = await openDemo(t, { width: 390, height: 844 });
  await page.fill('#key-input', KEY);
  await page.setInputFiles('#file-input', photoPath);
  await page.waitForSelector('#result:not([hidden])');
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'fits 390 px');
  await page.screenshot({ path: join(ARTIFACTS, 'demo-phone.png'), fullPage: true });

  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, button, select, textarea')]
      .filter((el) => {
        const labels = (el as HTMLInputElement).labels;
        const labelText = labels ? [...labels].map((l) => l.textContent!.trim()).join('') : '';
        return !labelText && !el.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent!.trim());
      })
      .map((el) => el.id || el.outerHTML.slice(0, 60)),
  );
  t.same(unlabelled, [], 'every control has a label');

  // Tab from the top reaches every control of the page, in order.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const reached: string[] = [];
  for (let i = 0; i < 20; i++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => {
      const el = document.activeElement as HTMLInputElement | null;
      return el ? el.id || (el.name ? `${el.name}=${el.value}` : el.tagName) : '';
    });
    if (!reached.includes(id)) reached.push(id);
  }
  for (const id of [
    'key-input',
    'file-input',
    'url-input',
    'url-submit',
    'slider',
    'bg=transparent',
    'bg-color',
    'shadow=none',
    'shadow-opacity',
    'download',
  ]) {
    t.ok(reached.includes(id), `Tab reaches ${id}`);
  }
  // Picking a photo uploads it at once: the key must be typed first, so it comes first (in the
  // document, hence in Tab order: no tabindex reorders them).
  const keyFirst = await page.evaluate(() => {
    const key = document.getElementById('key-input')!;
    const file = document.getElementById('file-input')!;
    const following = 4; // Node.DOCUMENT_POSITION_FOLLOWING
    return Boolean(key.compareDocumentPosition(file) & following) && !key.hasAttribute('tabindex') && !file.hasAttribute('tabindex');
  });
  t.ok(keyFirst, 'the key field comes before the photo picker');
});
