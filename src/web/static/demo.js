// The demo page: sends a photo (picked, dropped, pasted, or a URL) to this server, shows the upload's
// progress, then the cut-out over a checkerboard beside the original and the response's size and
// timing headers. Without a key it calls the sandbox (preview size, free); with one, the keyed
// endpoint at full size. The background colour is painted by the page under the transparent PNG:
// switching colours is instant and costs no second request or credit, and the download paints the
// chosen colour into the PNG's pixels (remove.bg's `bg_color` would need a new request per colour).
// Shadows likewise: the page keeps the cut-out's pixels and draws drop, 3D or car shadows into a copy
// with demo-shadow.js (the addon's steps, in the browser), so a change of kind or opacity is redrawn
// at once, with no request; the download carries them.
'use strict';

const SANDBOX_ENDPOINT = '/sandbox/v1.0/removebg';
const KEYED_ENDPOINT = '/v1.0/removebg';

const $ = (id) => document.getElementById(id);
const els = {
  form: $('source-form'),
  dropZone: $('drop-zone'),
  file: $('file-input'),
  url: $('url-input'),
  submit: $('url-submit'),
  key: $('key-input'),
  status: $('status'),
  progress: $('progress'),
  error: $('error'),
  errorTitle: $('error-title'),
  errorDetail: $('error-detail'),
  result: $('result'),
  compare: $('compare'),
  before: $('before'),
  after: $('after'),
  canvas: $('result-canvas'),
  slider: $('slider'),
  bgColor: $('bg-color'),
  shadowOpacity: $('shadow-opacity'),
  shadowOpacityValue: $('shadow-opacity-value'),
  download: $('download'),
  facts: $('facts'),
};

/**
 * The last result: the PNG as the server sent it, the cut-out's RGBA without a shadow (what each
 * shadow is drawn over), one buffer of its size that the shadow is drawn into (a 12 MP cut-out is
 * 48 MB: not allocated again for each frame of a dragged slider), and a name for the download.
 */
const current = { png: null, cutout: null, shaded: null, name: 'photo', beforeUrl: null };
let busy = false;

// ---- sending ---------------------------------------------------------------------------------

function send(source) {
  if (busy) return;
  const key = els.key.value.trim();
  const endpoint = key ? KEYED_ENDPOINT : SANDBOX_ENDPOINT;
  const form = new FormData();
  if (source.file) form.append('image_file', source.file, source.file.name || 'image');
  else form.append('image_url', source.url);
  form.append('size', key ? 'full' : 'preview');
  form.append('format', 'png'); // `auto` answers JPG when nothing is transparent; the page always wants a PNG

  setBusy(true);
  hideError();
  els.result.hidden = true;
  setProgress(0, source.file ? 'Uploading… 0%' : 'Asking the server to fetch the image…');

  const xhr = new XMLHttpRequest(); // not fetch(): only XHR reports upload progress
  xhr.open('POST', endpoint);
  xhr.responseType = 'arraybuffer';
  if (key) xhr.setRequestHeader('X-Api-Key', key);
  xhr.upload.addEventListener('progress', (e) => {
    if (e.lengthComputable) setProgress(e.loaded / e.total, `Uploading… ${Math.round((100 * e.loaded) / e.total)}%`);
  });
  xhr.upload.addEventListener('load', () => setProgress(null, 'Removing the background…'));
  xhr.addEventListener('load', () => {
    onResponse(xhr, source, endpoint).catch((err) => fail('The result could not be shown', String(err?.message ? err.message : err)));
  });
  xhr.addEventListener('error', () => fail('Network error', 'The server could not be reached.'));
  xhr.addEventListener('abort', () => fail('Cancelled', 'The request was cancelled.'));
  xhr.send(form);
}

async function onResponse(xhr, source, endpoint) {
  const type = (xhr.getResponseHeader('Content-Type') || '').toLowerCase();
  if (xhr.status !== 200 || !type.startsWith('image/png')) {
    showApiError(xhr);
    return;
  }
  const png = new Blob([xhr.response], { type: 'image/png' });
  const bitmap = await createImageBitmap(png);
  current.png = png;
  current.name = baseName(source);
  await showBefore(source);
  drawResult(bitmap);
  showFacts(xhr, endpoint, png.size);
  els.result.hidden = false;
  setProgress(undefined, `Done: ${bitmap.width} × ${bitmap.height} px in ${xhr.getResponseHeader('X-Processing-Time-Ms') ?? '?'} ms.`);
  bitmap.close(); // its pixels live on in the canvas and current.cutout
  setBusy(false);
}

/** The API's `{"errors":[{title, code, detail}]}`, shown as sent; anything else by its status. */
function showApiError(xhr) {
  const text = new TextDecoder().decode(xhr.response || new ArrayBuffer(0));
  let entry;
  try {
    entry = JSON.parse(text).errors[0];
  } catch {
    entry = undefined;
  }
  const retry = xhr.getResponseHeader('Retry-After');
  if (entry && typeof entry.title === 'string') {
    const parts = [entry.detail, entry.code && `(${entry.code}, HTTP ${xhr.status})`, retry && `Retry after ${retry} s.`].filter(Boolean);
    fail(entry.title, parts.join(' '));
  } else {
    fail(`HTTP ${xhr.status}`, text.slice(0, 300));
  }
}

// ---- showing ---------------------------------------------------------------------------------

function setBusy(on) {
  busy = on;
  els.submit.disabled = on;
  els.file.disabled = on;
  els.form.setAttribute('aria-busy', String(on));
}

/** `fraction` 0…1 shows a bar, null an indeterminate one, undefined hides it. */
function setProgress(fraction, message) {
  els.status.textContent = message;
  if (fraction === undefined) {
    els.progress.hidden = true;
    return;
  }
  els.progress.hidden = false;
  if (fraction === null) els.progress.removeAttribute('value');
  else els.progress.value = fraction;
}

function fail(title, detail) {
  setBusy(false);
  setProgress(undefined, 'Failed.');
  els.errorTitle.textContent = title;
  els.errorDetail.textContent = detail || '';
  els.error.hidden = false;
}

function hideError() {
  els.error.hidden = true;
  els.errorTitle.textContent = '';
  els.errorDetail.textContent = '';
}

/** The original under the slider: the picked file, or the URL (when the browser may load it). */
function showBefore(source) {
  if (current.beforeUrl) URL.revokeObjectURL(current.beforeUrl);
  current.beforeUrl = source.file ? URL.createObjectURL(source.file) : null;
  const src = current.beforeUrl || source.url;
  return new Promise((resolve) => {
    els.before.onload = () => {
      els.compare.classList.remove('no-before');
      els.slider.disabled = false;
      resolve();
    };
    els.before.onerror = () => {
      // No original to compare with (a URL this browser cannot load): show the cut-out alone.
      els.compare.classList.add('no-before');
      els.slider.disabled = true;
      resolve();
    };
    els.before.src = src;
  });
}

function drawResult(bitmap) {
  els.canvas.width = bitmap.width;
  els.canvas.height = bitmap.height;
  const ctx = resultContext();
  ctx.clearRect(0, 0, bitmap.width, bitmap.height);
  ctx.drawImage(bitmap, 0, 0);
  current.cutout = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
  current.shaded = new ImageData(bitmap.width, bitmap.height);
  applyBackground();
  drawShadowNow();
}

// The shadow is read back and redrawn whole on each change: say so, so the browser keeps the
// canvas in memory rather than on the GPU.
const resultContext = () => els.canvas.getContext('2d', { willReadFrequently: true });

/** The facts the response headers give, one row each. */
function showFacts(xhr, endpoint, bytes) {
  const h = (name) => xhr.getResponseHeader(name);
  const rows = [
    ['Endpoint', `POST ${endpoint}`, ''],
    ['Size', `${h('X-Width')} × ${h('X-Height')} px, ${formatBytes(bytes)}`, 'X-Width'],
    ['Processing time', `${h('X-Processing-Time-Ms')} ms`, 'X-Processing-Time-Ms'],
    ['Stages', formatServerTiming(h('Server-Timing')), 'Server-Timing'],
    ['Credits charged', h('X-Credits-Charged'), 'X-Credits-Charged'],
    // X-Foreground-* measure the original photo, not the (maybe smaller) result.
    [
      'Subject box',
      `${h('X-Foreground-Width')} × ${h('X-Foreground-Height')} px at (${h('X-Foreground-Left')}, ${h('X-Foreground-Top')}), in the original photo's pixels`,
      'X-Foreground-Width',
    ],
  ];
  if (h('X-RateLimit-Limit') !== null)
    rows.push(['Rate limit', `${h('X-RateLimit-Remaining')} of ${h('X-RateLimit-Limit')} left this minute`, 'X-RateLimit-Remaining']);
  els.facts.replaceChildren(
    ...rows.flatMap(([label, value, headerName]) => {
      const dt = document.createElement('dt');
      dt.textContent = label;
      const dd = document.createElement('dd');
      dd.textContent = value ?? '—';
      if (headerName) dd.dataset.header = headerName;
      // The header as sent, for whoever reads the names the tools use.
      if (headerName === 'Server-Timing' && h(headerName)) dd.title = `Server-Timing: ${h(headerName)}`;
      return [dt, dd];
    }),
  );
}

// Server-Timing's stage names (the worker's: src/worker/pipeline.ts, src/pool/staged-pool.ts) in a
// reader's words. The header keeps its names: tools and benchmarks read them.
const STAGE_LABELS = {
  queue: 'waiting in line',
  probe: 'reading the file',
  decodeWait: 'waiting for memory',
  decode: 'decoding',
  batchWait: 'waiting for a batch',
  infer: 'finding the subject',
  decodeOutput: 'decoding at full size',
  composite: 'cutting out the edges',
  layout: 'cropping and placing',
  background: 'adding the background',
  encode: 'saving the image',
  total: 'total',
};

function formatServerTiming(value) {
  if (!value) return '—';
  return value
    .split(',')
    .map((entry) => {
      const [name, ...params] = entry.trim().split(';');
      const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
      const n = dur ? Number(dur.slice(4)) : NaN;
      // Not a duration: how many photos shared the model run.
      if (name === 'batch') return Number.isFinite(n) ? `${n} photo${n === 1 ? '' : 's'} per model run` : null;
      const label = Object.hasOwn(STAGE_LABELS, name) ? STAGE_LABELS[name] : name;
      return Number.isFinite(n) ? `${label} ${n.toFixed(0)} ms` : label;
    })
    .filter((part) => part !== null)
    .map((part, i) => (i === 0 ? part[0].toUpperCase() + part.slice(1) : part))
    .join(' · ');
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

function baseName(source) {
  const raw = source.file ? source.file.name : decodeURIComponent(new URL(source.url).pathname.split('/').pop() || '');
  return (
    raw
      .replace(/\.[^.]*$/, '')
      .replace(/[^\w.-]+/g, '_')
      .slice(0, 80) || 'photo'
  );
}

// ---- background, shadow, slider, download -----------------------------------------------------------

function chosenColor() {
  const picked = document.querySelector('input[name="bg"]:checked');
  return picked && picked.value === 'color' ? els.bgColor.value : null;
}

function applyBackground() {
  const color = chosenColor();
  els.after.classList.toggle('checkerboard', color === null);
  els.after.style.backgroundColor = color ?? '';
}

for (const radio of document.querySelectorAll('input[name="bg"]')) radio.addEventListener('change', applyBackground);
els.bgColor.addEventListener('input', () => {
  document.querySelector('input[name="bg"][value="color"]').checked = true;
  applyBackground();
});

/** The chosen kind and opacity, or null for none (opacity 0 draws nothing, as on the API). */
function chosenShadow() {
  const picked = document.querySelector('input[name="shadow"]:checked');
  const opacity = Number(els.shadowOpacity.value);
  return picked && picked.value !== 'none' && opacity > 0 ? { type: picked.value, opacity } : null;
}

function drawShadowNow() {
  if (!current.cutout) return;
  const shadow = chosenShadow();
  if (!shadow) {
    resultContext().putImageData(current.cutout, 0, 0);
    return;
  }
  const image = current.shaded;
  image.data.set(current.cutout.data);
  globalThis.cutoutShadow.drawShadow(image.data, image.width, image.height, shadow);
  resultContext().putImageData(image, 0, 0);
}

// A dragged slider fires faster than a large photo redraws: at most one redraw a frame.
let shadowFrame = 0;
function redrawShadow() {
  if (shadowFrame) return;
  shadowFrame = requestAnimationFrame(() => {
    shadowFrame = 0;
    drawShadowNow();
  });
}

// Opacity `auto` as remove.bg has it, 90 for car and 50 for the rest, until the user sets one.
let opacityChosen = false;
function showOpacity() {
  els.shadowOpacityValue.textContent = `${els.shadowOpacity.value}%`;
}
for (const radio of document.querySelectorAll('input[name="shadow"]')) {
  radio.addEventListener('change', () => {
    if (!opacityChosen) els.shadowOpacity.value = radio.value === 'car' ? '90' : '50';
    showOpacity();
    redrawShadow();
  });
}
els.shadowOpacity.addEventListener('input', () => {
  opacityChosen = true;
  showOpacity();
  redrawShadow();
});

els.slider.addEventListener('input', () => {
  const v = Number(els.slider.value);
  els.compare.style.setProperty('--split', `${v}%`);
  els.slider.setAttribute('aria-valuetext', `${v}% cut-out`);
});

els.download.addEventListener('click', async () => {
  if (!current.png) return;
  const color = chosenColor();
  let blob = current.png; // transparent and no shadow: the server's bytes as they came
  if (color || chosenShadow()) {
    if (shadowFrame) {
      cancelAnimationFrame(shadowFrame);
      shadowFrame = 0;
      drawShadowNow();
    }
    const canvas = document.createElement('canvas');
    canvas.width = els.canvas.width;
    canvas.height = els.canvas.height;
    const ctx = canvas.getContext('2d');
    if (color) {
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, canvas.width, canvas.height);
    }
    ctx.drawImage(els.canvas, 0, 0); // the cut-out with its shadow, as shown
    blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
  }
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = `${current.name}-cutout.png`;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked later, not at once: the browser reads the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
});

// ---- sources: pick, drop, paste, URL -------------------------------------------------------------

els.file.addEventListener('change', () => {
  const file = els.file.files?.[0];
  if (file) send({ file });
});

els.form.addEventListener('submit', (e) => {
  e.preventDefault();
  const url = els.url.value.trim();
  if (url) {
    if (!/^https?:\/\//i.test(url)) {
      fail('Not an image URL', 'Give an http:// or https:// address.');
      return;
    }
    send({ url });
    return;
  }
  const file = els.file.files?.[0];
  if (file) send({ file });
  else fail('No image given', 'Choose, drop or paste a photo, or give an image URL.');
});

for (const type of ['dragenter', 'dragover']) {
  els.dropZone.addEventListener(type, (e) => {
    e.preventDefault();
    els.dropZone.classList.add('dragging');
  });
}
for (const type of ['dragleave', 'drop']) els.dropZone.addEventListener(type, () => els.dropZone.classList.remove('dragging'));
els.dropZone.addEventListener('drop', (e) => {
  e.preventDefault();
  const file = e.dataTransfer?.files[0];
  if (file) send({ file });
});
// A photo dropped beside the zone must not make the browser navigate away from the page.
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());

document.addEventListener('paste', (e) => {
  const data = e.clipboardData;
  if (!data) return;
  const file = [...data.files].find((f) => f.type.startsWith('image/'));
  if (file) {
    e.preventDefault();
    send({ file });
    return;
  }
  const text = data.getData('text/plain').trim();
  const inField = e.target instanceof HTMLInputElement;
  if (!inField && /^https?:\/\/\S+$/i.test(text)) {
    e.preventDefault();
    els.url.value = text;
    send({ url: text });
  }
});
