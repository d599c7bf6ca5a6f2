// Hostile requests for bench:faults --faults fuzz-http, as raw bytes: every body type and image source of the API with
// mutated fields, bodies, framing and headers, from a seeded generator (a failure replays by seed).
// Each request says whether it may go unanswered, and why: the cases uWebSockets.js closes itself
// (docs/http.md, "What uWebSockets.js answers itself"). Anything else must be answered.

import sharp from 'sharp';

/** xorshift32: the same seed gives the same requests. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    let s = this.s;
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    this.s = s >>> 0;
    return this.s / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  bytes(n: number): Buffer {
    return Buffer.from(Array.from({ length: n }, () => this.int(256)));
  }
}

/** Why uWS may close a request's connection without any answer (no JSON is possible for these). */
export type SilentReason =
  | 'unknown method'
  | 'invalid Content-Length'
  | 'malformed chunk'
  | 'head over 4 kB in pieces'
  | 'body shorter than Content-Length'
  | 'client gave up'
  | 'pipelined behind a pending answer';

export interface FuzzRequest {
  bytes: Buffer;
  method: string;
  path: string;
  /** What the body is: multipart, json, urlencoded or raw. */
  body: string;
  /** Write in small pieces with pauses (a slow client) instead of at once. */
  pieces: boolean;
  /** The client closes its socket this many ms after starting, or never. */
  giveUpAfterMs: number | null;
  /** How many answers a full exchange gives (2 for a pipelined pair). */
  answers: number;
  /** Reasons this request may end without an answer; empty: it must be answered. */
  mayBeSilent: SilentReason[];
}

export interface Images {
  png: Buffer;
  jpeg: Buffer;
  webp: Buffer;
}

/** Three small photos (fast to remove, so the fuzz reaches the pool often). */
export async function smallImages(): Promise<Images> {
  return {
    png: await sharp({ create: { width: 48, height: 32, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer(),
    jpeg: await sharp({ create: { width: 40, height: 30, channels: 3, background: '#a37' } })
      .jpeg()
      .toBuffer(),
    webp: await sharp({ create: { width: 30, height: 20, channels: 4, background: '#37a8' } })
      .webp()
      .toBuffer(),
  };
}

/** Field values: valid ones, remove.bg aliases, and hostile ones (huge, NUL, NaN, out of range). */
function fieldValues(port: number): Record<string, readonly string[]> {
  return {
    size: ['auto', 'preview', 'full', 'small', 'regular', 'medium', 'hd', '4k', '50MP', '', 'FULL', 'x'.repeat(5000), '\u0000', 'préview'],
    format: ['auto', 'png', 'jpg', 'webp', 'zip', 'gif', ''],
    type: ['auto', 'person', 'product', 'car', 'graphic', 'nope'],
    type_level: ['none', '1', '2', 'latest', '3'],
    roi: ['0 0 100% 100%', '10% 10% 90% 90%', '0px 0px 10px 10px', '5 5 1 1', '0 0 99999 99999', '1e308 0 1 1', 'NaN NaN NaN NaN', '-1 -1 2 2', ''],
    crop: ['true', 'false', '1', '0', '', 'maybe'],
    crop_margin: ['10px', '10%', '1 2 3 4', '501px', '51%', '-3px', '1 2 3', ''],
    scale: ['10%', '100%', 'original', '9%', '101%', '0%', 'NaN%', ''],
    position: ['original', 'center', '50%', '0% 100%', '101%', '-1%', 'a b', ''],
    channels: ['rgba', 'alpha', 'rgb', ''],
    bg_color: ['81d4fa', 'fff', '81d4fa77', 'green', '#fff', 'zzzzzz', 'rgb(1,2,3)', ''],
    add_shadow: ['true', 'false', 'x'],
    shadow_type: ['car', '3D', 'drop', 'none', 'auto', 'bad'],
    'shadow_type[car]': ['car', 'drop', 'bad'],
    shadow_opacity: ['0', '100', '101', '-1', 'auto', '1e9'],
    semitransparency: ['true', 'false'],
    // Loopback, private, metadata and non-http addresses: refused before any download.
    bg_image_url: ['http://127.0.0.1:1/x.png', 'file:///etc/passwd', 'ftp://x', 'http://[::1]/', 'not a url', 'http://169.254.169.254/latest/meta-data/'],
    image_url: ['http://127.0.0.1:1/x.png', 'file:///etc/passwd', 'http://10.0.0.1/', 'gopher://x', `http://localhost:${port}/v1.0/account`, 'x'.repeat(9000)],
  };
}

const PATHS = [
  '/v1.0/removebg',
  '/v1.0/removebg',
  '/v1.0/removebg',
  '/sandbox/v1.0/removebg',
  '/v1.0/account',
  '/v1.0/improve',
  '/v1.0/removebg?x=1',
  '//v1.0/removebg',
  '/v1.0/removebg/../account',
];
const OTHER_METHODS = ['GET', 'PUT', 'HEAD', 'OPTIONS', 'DELETE', 'PöST', 'post'];
const UWS_METHODS = new Set(['GET', 'PUT', 'HEAD', 'OPTIONS', 'DELETE', 'POST', 'PATCH', 'CONNECT', 'TRACE']);

/** Flipped bytes, a cut, inserted noise, a hole or a repeat. */
function mutate(rng: Rng, buf: Buffer): Buffer {
  const b = Buffer.from(buf);
  switch (rng.int(6)) {
    case 0:
      for (let i = rng.int(20); i >= 0; i--) b[rng.int(b.length)] = rng.int(256);
      return b;
    case 1:
      return b.subarray(0, rng.int(b.length));
    case 2: {
      const at = rng.int(b.length);
      return Buffer.concat([b.subarray(0, at), rng.bytes(rng.int(64)), b.subarray(at)]);
    }
    case 3: {
      const at = rng.int(b.length);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + rng.int(b.length - at))]);
    }
    case 4:
      return Buffer.concat([b, b.subarray(0, rng.int(b.length))]);
    default:
      return b;
  }
}

interface Part {
  name: string;
  filename?: string;
  type?: string;
  value: Buffer | string;
}

function multipart(parts: Part[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`));
    chunks.push(Buffer.isBuffer(p.value) ? p.value : Buffer.from(p.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

interface Body {
  kind: string;
  bytes: Buffer;
  contentType: string;
}

function multipartRequest(rng: Rng, image: Buffer, fields: Array<[string, string]>, values: Record<string, readonly string[]>): Body {
  const boundary = rng.pick(['----b' + rng.int(1e9), 'x', 'a'.repeat(70), 'a'.repeat(200), 'sp ace', '"quoted"']);
  const parts: Part[] = [];
  const source = rng.int(4);
  if (source === 0 || source === 3) {
    const filename = rng.pick(['a.png', 'image_file', '', '../../etc/passwd', 'ü.jpg']);
    const type = rng.pick([undefined, 'image/png', 'application/octet-stream', 'text/plain']);
    parts.push({ name: 'image_file', filename, ...(type && { type }), value: image });
  }
  if (source === 1 || source === 3) {
    const b64 = image.toString('base64');
    parts.push({ name: 'image_file_b64', value: rng.chance(0.8) ? b64 : mutate(rng, Buffer.from(b64)).toString('latin1') });
  }
  if (source === 2) parts.push({ name: 'image_url', value: rng.pick(values.image_url!) });
  if (rng.chance(0.1)) parts.push({ name: 'bg_image_file', filename: 'bg.png', value: image });
  for (const [name, value] of fields) parts.push({ name, value });
  let bytes: Buffer = multipart(parts, boundary.replace(/"/g, ''));
  if (rng.chance(0.3)) bytes = mutate(rng, bytes);
  const contentType = rng.pick([
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary=${boundary}`,
    'multipart/form-data',
    'multipart/form-data; boundary=',
    `multipart/form-data; boundary=${boundary}; boundary=zz`,
    `Multipart/Form-Data; BOUNDARY=${boundary}`,
    `multipart/mixed; boundary=${boundary}`,
  ]);
  return { kind: 'multipart', bytes, contentType };
}

function jsonRequest(rng: Rng, image: Buffer, fields: Array<[string, string]>, values: Record<string, readonly string[]>): Body {
  const o: Record<string, unknown> = Object.fromEntries(fields);
  const source = rng.int(3);
  if (source !== 1) o.image_file_b64 = image.toString('base64');
  if (source === 1) o.image_url = rng.pick(values.image_url!);
  if (source === 2) o.image_url = 'http://x/';
  if (rng.chance(0.2)) o.crop = rng.pick([true, false, 1, null, [], {}]);
  if (rng.chance(0.1)) o.size = rng.pick([1, null, ['full'], { a: 1 }]);
  let text = JSON.stringify(o);
  if (rng.chance(0.15)) text = '['.repeat(rng.int(200_000)); // deep nesting
  if (rng.chance(0.1)) text = `{"__proto__":{"size":"full"},"constructor":{"prototype":{"x":1}},"image_file_b64":"${image.toString('base64')}"}`;
  let bytes: Buffer = Buffer.from(text);
  if (rng.chance(0.3)) bytes = mutate(rng, bytes);
  const contentType = rng.pick(['application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/json', 'application/json;;;']);
  return { kind: 'json', bytes, contentType };
}

function urlencodedRequest(rng: Rng, image: Buffer, fields: Array<[string, string]>): Body {
  const p = new URLSearchParams(fields);
  if (rng.chance(0.8)) p.append('image_file_b64', image.toString('base64'));
  if (rng.chance(0.1)) p.append('image_file_b64', image.toString('base64'));
  const raw = p.toString();
  let bytes: Buffer = Buffer.from(rng.chance(0.5) ? raw.replace(/%2F/g, '/') : raw);
  if (rng.chance(0.3)) bytes = mutate(rng, bytes);
  return { kind: 'urlencoded', bytes, contentType: rng.pick(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=latin1']) };
}

/** One hostile request to `port`, authenticated with `key` most of the time. */
export function fuzzRequest(rng: Rng, images: Images, key: string, port: number): FuzzRequest {
  const values = fieldValues(port);
  const names = Object.keys(values);
  const fields: Array<[string, string]> = Array.from({ length: rng.int(5) }, () => {
    const name = rng.pick(names);
    return [name, rng.pick(values[name]!)];
  });
  const clean = rng.pick([images.png, images.jpeg, images.webp]);
  const image = rng.chance(0.7) ? clean : mutate(rng, clean);
  const kind = rng.int(7);
  const body: Body =
    kind <= 2
      ? multipartRequest(rng, image, fields, values)
      : kind <= 4
        ? jsonRequest(rng, image, fields, values)
        : kind === 5
          ? urlencodedRequest(rng, image, fields)
          : { kind: 'raw', bytes: rng.bytes(rng.int(4000)), contentType: rng.pick(['image/png', 'application/octet-stream', '', 'text/plain']) };

  const method = rng.chance(0.9) ? 'POST' : rng.pick(OTHER_METHODS);
  const path = rng.pick(PATHS);
  const mayBeSilent: SilentReason[] = [];
  if (!UWS_METHODS.has(method)) mayBeSilent.push('unknown method');

  const headers: Array<[string, string]> = [['Host', '127.0.0.1']];
  const auth = rng.int(10);
  if (auth < 7) headers.push(['X-Api-Key', key]);
  else if (auth === 7) headers.push(['X-Api-Key', 'wrong']);
  else if (auth === 8) headers.push(['X-Api-Key', key], ['X-Api-Key', 'other']);
  if (body.contentType) headers.push(['Content-Type', body.contentType]);
  if (rng.chance(0.1)) headers.push(['Accept', 'application/json']);

  let payload = body.bytes;
  const framing = rng.int(10);
  if (framing < 7) headers.push(['Content-Length', String(body.bytes.length)]);
  else if (framing === 7) {
    headers.push(['Content-Length', String(body.bytes.length + 1 + rng.int(100))]);
    mayBeSilent.push('body shorter than Content-Length'); // 408 at the deadline, or uWS's idle close first
  } else if (framing === 8) {
    headers.push(['Content-Length', rng.pick(['-1', 'abc', '99999999999999999999', '1e3', `${body.bytes.length}, ${body.bytes.length}`])]);
    mayBeSilent.push('invalid Content-Length'); // our 400, or uWS closes at the body
  } else {
    headers.push(['Transfer-Encoding', 'chunked']);
    const chunks: Buffer[] = [];
    let malformed = false;
    for (let i = 0; i < body.bytes.length; ) {
      const piece = body.bytes.subarray(i, i + 1 + rng.int(3000));
      const extension = rng.chance(0.05);
      malformed ||= extension;
      chunks.push(Buffer.from(`${piece.length.toString(16)}${extension ? ';ext=1' : ''}\r\n`), piece, Buffer.from('\r\n'));
      i += piece.length;
    }
    const badEnd = rng.chance(0.1);
    chunks.push(Buffer.from(badEnd ? 'zz\r\n' : '0\r\n\r\n'));
    if (malformed || badEnd) mayBeSilent.push('malformed chunk');
    payload = Buffer.concat(chunks);
  }
  if (rng.chance(0.05)) headers.push(['X-Junk', 'a'.repeat(rng.int(20_000))]);

  const pieces = rng.chance(0.2);
  const giveUpAfterMs = rng.chance(0.03) ? rng.int(50) : null;
  if (giveUpAfterMs !== null) mayBeSilent.push('client gave up');
  // Now and then a second request pipelined behind the first on the same connection. uWS closes
  // the connection, answering neither, when it arrives while the first's answer is still pending.
  const pipelined = rng.chance(0.05) && mayBeSilent.length === 0;
  if (pipelined) mayBeSilent.push('pipelined behind a pending answer');
  headers.push(['Connection', pipelined ? 'keep-alive' : 'close']);
  const head = (m: string, p: string, h: Array<[string, string]>) =>
    Buffer.from(`${m} ${p} HTTP/1.1\r\n${h.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1');
  const first = head(method, path, headers);
  const parts = [first, payload];
  if (pipelined)
    parts.push(
      head('GET', '/v1.0/account', [
        ['Host', '127.0.0.1'],
        ['X-Api-Key', key],
        ['Connection', 'close'],
      ]),
    );
  if (pieces && first.length > 4000) mayBeSilent.push('head over 4 kB in pieces');
  return { bytes: Buffer.concat(parts), method, path, body: body.kind, pieces, giveUpAfterMs, answers: pipelined ? 2 : 1, mayBeSilent };
}
