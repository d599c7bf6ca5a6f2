// Hostile image hosts for bench:faults --faults fuzz-fetch: a raw TCP server on loopback that answers each GET
// /s/<id> with the scenario registered under that id, byte for byte as the generator wrote it (bad
// framing, bad headers, drips, stalls, resets, redirect chains), and counts each scenario's
// connections still open. The generator says what image_url's fetcher must make of each scenario:
// exactly these bytes, an error (and which), or either of the two.

import net from 'node:net';
import type { Rng } from './fuzz-requests.js';

/** What the host does on a connection, in order, once the request head is in. */
export type Step =
  | { write: Buffer }
  | { wait: number }
  /** Half-close (FIN) and let the client finish. */
  | { end: true }
  /** Close with a TCP reset. */
  | { reset: true };
// With no end or reset last, the host keeps the connection open and silent: the client must leave.

/** What the fetcher must make of a scenario. */
export type Expect =
  | { kind: 'ok'; body: Buffer }
  | { kind: 'error'; reason: RegExp }
  /** A race the host cannot decide (say, a reset right after a complete body): these bytes, or an error. */
  | { kind: 'either'; body: Buffer };

export interface Scenario {
  id: number;
  steps: Step[];
  expect: Expect;
  /** What the generator chose, for the failure report. */
  describe: string[];
  /** Scenarios this one redirects to (their connections count as this one's). */
  children: number[];
  /** The host stops sending before the response is whole and keeps the connection open: only the timeout ends it. */
  stalls: boolean;
}

/** The limits the fetcher runs under, which the expectations depend on. */
export interface FetchLimits {
  maxBytes: number;
  totalTimeoutMs: number;
  maxRedirects: number;
}

export class HostileHost {
  private server!: net.Server;
  private readonly scenarios = new Map<number, Scenario>();
  private readonly open = new Map<number, Set<net.Socket>>();
  private nextId = 1;
  /** The ids named by connections whose scenario this host does not have (never had, or forgotten). */
  readonly strays: number[] = [];

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  async start(): Promise<void> {
    this.server = net.createServer((socket) => this.serve(socket));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }

  async stop(): Promise<void> {
    for (const set of this.open.values()) for (const s of set) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  newId(): number {
    return this.nextId++;
  }

  add(scenario: Scenario): void {
    this.scenarios.set(scenario.id, scenario);
  }

  forget(scenario: Scenario): void {
    for (const id of [scenario.id, ...scenario.children]) this.scenarios.delete(id);
  }

  url(id: number): string {
    return `http://127.0.0.1:${this.port}/s/${id}`;
  }

  /** Connections of this scenario and its redirect targets still open on the host's side. */
  openConnections(scenario: Scenario): number {
    return [scenario.id, ...scenario.children].reduce((n, id) => n + (this.open.get(id)?.size ?? 0), 0);
  }

  private serve(socket: net.Socket): void {
    socket.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      if (head.indexOf('\r\n\r\n') < 0 && head.length < 16_384) return;
      socket.off('data', onData);
      const id = Number(/^GET \/s\/(\d+) HTTP\/1\.1\r\n/.exec(head.toString('latin1'))?.[1]);
      const scenario = this.scenarios.get(id);
      if (!scenario) {
        this.strays.push(id);
        socket.destroy();
        return;
      }
      let set = this.open.get(id);
      if (!set) this.open.set(id, (set = new Set()));
      set.add(socket);
      socket.on('close', () => set.delete(socket));
      void this.play(socket, scenario.steps);
    };
    socket.on('data', onData);
  }

  private async play(socket: net.Socket, steps: Step[]): Promise<void> {
    for (const step of steps) {
      if (socket.destroyed) return;
      if ('write' in step) socket.write(step.write);
      else if ('wait' in step) await new Promise((r) => setTimeout(r, step.wait));
      else if ('end' in step) socket.end();
      else socket.resetAndDestroy();
    }
  }
}

const CRLF = '\r\n';

/** Bodies: a real small image, random bytes, nothing, or a size over the fetcher's cap. */
function pickBody(rng: Rng, images: Buffer[], limits: FetchLimits): { body: Buffer; what: string } {
  switch (rng.int(6)) {
    case 0:
      return { body: rng.bytes(rng.int(300)), what: 'random bytes' };
    case 1:
      return { body: Buffer.alloc(0), what: 'empty' };
    case 2:
      return { body: Buffer.alloc(limits.maxBytes + 1 + rng.int(2048), 0x5a), what: 'over the cap' };
    default:
      return { body: rng.pick(images), what: 'an image' };
  }
}

/** Cut `bytes` into writes of random sizes, with short pauses between some of them, `budgetMs` in all. */
function dribble(rng: Rng, bytes: Buffer, budgetMs: number): Step[] {
  if (rng.chance(0.6) || bytes.length === 0) return [{ write: bytes }];
  const steps: Step[] = [];
  let left = budgetMs;
  for (let at = 0; at < bytes.length; ) {
    const n = 1 + rng.int(rng.chance(0.3) ? 8 : 4096);
    steps.push({ write: bytes.subarray(at, at + n) });
    if (left > 0 && rng.chance(0.3)) {
      const wait = Math.min(left, rng.int(Math.ceil(budgetMs / 4) + 1));
      steps.push({ wait });
      left -= wait;
    }
    at += n;
  }
  return steps;
}

function chunked(rng: Rng, body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const n = 1 + rng.int(Math.max(1, Math.min(body.length - at, 5000)));
    const ext = rng.chance(0.1) ? ';x=y' : '';
    parts.push(Buffer.from(`${n.toString(16)}${ext}${CRLF}`), body.subarray(at, at + n), Buffer.from(CRLF));
    at += n;
  }
  parts.push(Buffer.from(rng.chance(0.2) ? `0${CRLF}X-Trailer: 1${CRLF}${CRLF}` : `0${CRLF}${CRLF}`));
  return Buffer.concat(parts);
}

/** Headers that are legal and ignored, or illegal (which the client's parser must refuse). */
function extraHeaders(rng: Rng): { lines: string; bad: string | null } {
  switch (rng.int(12)) {
    case 0:
      return { lines: `X-Big: ${'a'.repeat(17_000)}${CRLF}`, bad: 'header over 16 kB' };
    case 1:
      return { lines: `X-Nul: a\0b${CRLF}`, bad: 'NUL in a header' };
    case 2:
      return { lines: `X-Fold: a${CRLF} b${CRLF}`, bad: 'folded header' };
    case 3:
      return { lines: `Bad Name: 1${CRLF}`, bad: 'space in a header name' };
    case 4:
      return { lines: Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}${CRLF}`).join(''), bad: null };
    case 5:
      return { lines: `Content-Type: image/png${CRLF}Connection: keep-alive${CRLF}Content-Encoding: gzip${CRLF}`, bad: null };
    case 6:
      return { lines: `Set-Cookie: a=b${CRLF}Set-Cookie: c=d${CRLF}`, bad: null };
    default:
      return { lines: `Content-Type: ${rng.pick(['image/png', 'image/jpeg', 'text/html', 'application/octet-stream', ''])}${CRLF}`, bad: null };
  }
}

/** Any of these reasons. */
function anyOf(...reasons: RegExp[]): RegExp {
  return new RegExp(reasons.map((r) => r.source).join('|'));
}

/** Node's parser refused the response (bad bytes, conflicting lengths, headers over 16 kB). */
const REFUSED = /invalid HTTP response|headers exceed 16 kB/;
const CUT = /Connection closed before the body was complete/;
const RESET = /Connection reset/;
/** The error a framing or parse failure may surface as: a refusal, a reset or an early close. */
const BROKEN = anyOf(REFUSED, CUT, RESET);
const TIMED_OUT = /Timed out after/;
const TOO_LARGE = /exceeds limit/;

/**
 * One scenario (and, for redirects, the scenarios it points to), registered on `host`. Delays add up
 * to well under the timeout, or well over it where a stall is meant, so that each expectation holds.
 */
export function hostileScenario(rng: Rng, host: HostileHost, images: Buffer[], limits: FetchLimits, hop = 0): Scenario {
  const id = host.newId();
  const describe: string[] = [];
  const children: number[] = [];
  const stall = Math.ceil(limits.totalTimeoutMs * 1.5);
  // Each hop's pauses: a whole redirect chain stays under a quarter of the timeout.
  const pause = Math.floor(limits.totalTimeoutMs / 4 / (limits.maxRedirects + 2));
  const done = (steps: Step[], expect: Expect, stalls = false): Scenario => {
    const s = { id, steps, expect, describe, children, stalls };
    host.add(s);
    return s;
  };
  const roll = rng.int(100);

  // Redirects: to another scenario (relative or absolute), or somewhere refused.
  if (roll < 14) {
    const status = rng.pick([301, 302, 303, 307, 308]);
    let location: string;
    let expect: Expect;
    let stalls = false;
    if (rng.chance(0.75)) {
      const next = hostileScenario(rng, host, images, limits, hop + 1);
      children.push(next.id, ...next.children);
      location = rng.chance(0.5) ? `/s/${next.id}` : host.url(next.id);
      const followed = hop + 1 <= limits.maxRedirects;
      expect = followed ? next.expect : { kind: 'error', reason: /Too many redirects/ };
      stalls = followed && next.stalls;
      describe.push(`${status} to scenario ${next.id}`);
    } else {
      const [target, reason] = rng.pick<[string, RegExp]>([
        ['http://10.1.2.3/x.png', /Refusing to connect to 10\.1\.2\.3/],
        ['http://169.254.169.254/latest/meta-data/', /Refusing to connect/],
        ['http://[::ffff:a00:1]/', /Refusing to connect/],
        ['http://0/', /Refusing to connect to 0\.0\.0\.0/],
        ['file:///etc/passwd', /Unsupported URL scheme 'file'/],
        ['ftp://x/y', /Unsupported URL scheme 'ftp'/],
        ['http://u:p@127.0.0.1/', /credentials/],
        ['http://[', /Invalid redirect location/],
      ]);
      location = target;
      expect = hop + 1 > limits.maxRedirects ? { kind: 'error', reason: /Too many redirects/ } : { kind: 'error', reason };
      describe.push(`${status} to ${target}`);
    }
    const head = `HTTP/1.1 ${status} Moved${CRLF}Location: ${location}${CRLF}Content-Length: 0${CRLF}${CRLF}`;
    return done([...dribble(rng, Buffer.from(head), pause), { end: true }], expect, stalls);
  }

  // A status that is not a success (or not a status at all).
  if (roll < 24) {
    const [line, reason] = rng.pick<[string, RegExp]>([
      ['HTTP/1.1 404 Not Found', /HTTP Status 404/],
      ['HTTP/1.1 500 Oops', /HTTP Status 500/],
      ['HTTP/1.1 302 No Location', /HTTP Status 302/],
      ['HTTP/1.1 304 Not Modified', /HTTP Status 304/],
      ['HTTP/1.1 999 What', /HTTP Status 999/],
      ['HTTP/2 200 OK', BROKEN],
      ['ICY 200 OK', BROKEN],
      ['HTTP/1.1 2000 OK', BROKEN],
      ['\x00\x01\x02', BROKEN],
    ]);
    describe.push(`status line ${JSON.stringify(line)}`);
    return done([...dribble(rng, Buffer.from(`${line}${CRLF}Content-Length: 3${CRLF}${CRLF}abc`), pause), { end: true }], { kind: 'error', reason });
  }

  // A 2xx with a body, framed one of many ways.
  const { body, what } = pickBody(rng, images, limits);
  const overCap = body.length > limits.maxBytes;
  describe.push(what);
  const prelude = rng.chance(0.1) ? `HTTP/1.1 100 Continue${CRLF}${CRLF}` : '';
  const status = rng.pick(['200 OK', '200 OK', '200 OK', '201 Created', '203 Non-Authoritative', '200']);
  const extra = extraHeaders(rng);
  const statusLine = `${prelude}HTTP/1.1 ${status}${CRLF}${extra.lines}`;
  if (extra.bad) describe.push(extra.bad);
  const framing = rng.pick([
    'length',
    'length',
    'chunked',
    'close',
    'length short then end',
    'length short then stall',
    'length long',
    'chunked bad size',
    'chunked cut',
    'chunked stall',
    'close then stall',
    'two lengths',
    'length and chunked',
    'declared over the cap',
    'drip then stall',
    'reset after body',
    'reset mid body',
    'HTTP/1.0 close',
  ]);
  describe.push(framing);
  // A header the parser refuses decides before any framing does.
  const refused = (e: Expect): Expect => (extra.bad ? { kind: 'error', reason: BROKEN } : e);
  const okOrCap = (b: Buffer): Expect => (b.length > limits.maxBytes ? { kind: 'error', reason: TOO_LARGE } : { kind: 'ok', body: b });
  const send = (head: string, payload: Buffer) => dribble(rng, Buffer.concat([Buffer.from(head), payload]), pause);
  const cut = body.length > 0 ? rng.int(body.length) : 0;

  switch (framing) {
    case 'length':
      return done([...send(`${statusLine}Content-Length: ${body.length}${CRLF}${CRLF}`, body), { end: true }], refused(okOrCap(body)));
    case 'chunked':
      return done(
        [...send(`${statusLine}Transfer-Encoding: chunked${CRLF}${CRLF}`, chunked(rng, body)), ...(rng.chance(0.5) ? [{ end: true } as Step] : [])],
        refused(okOrCap(body)),
      );
    case 'close':
      return done([...send(`${statusLine}${CRLF}`, body), { end: true }], refused(okOrCap(body)));
    case 'HTTP/1.0 close':
      return done([...send(`HTTP/1.0 200 OK${CRLF}${extra.lines}${CRLF}`, body), { end: true }], refused(okOrCap(body)));
    case 'length short then end': // declared more than is sent, then the host closes
      return done(
        [...send(`${statusLine}Content-Length: ${body.length + 1 + rng.int(100)}${CRLF}${CRLF}`, body), { end: true }],
        refused(overCap ? { kind: 'error', reason: TOO_LARGE } : { kind: 'error', reason: BROKEN }),
      );
    case 'length short then stall':
      return done(
        [...send(`${statusLine}Content-Length: ${body.length + 1}${CRLF}${CRLF}`, body), { wait: stall }],
        refused(overCap ? { kind: 'error', reason: TOO_LARGE } : { kind: 'error', reason: TIMED_OUT }),
        true,
      );
    case 'length long': // declared less than is sent: the declared bytes are the body
      return done([...send(`${statusLine}Content-Length: ${cut}${CRLF}${CRLF}`, body), { end: true }], refused(okOrCap(body.subarray(0, cut))));
    case 'chunked bad size':
      return done(
        [
          ...send(
            `${statusLine}Transfer-Encoding: chunked${CRLF}${CRLF}`,
            Buffer.from(rng.pick(['zz', '-1', 'ffffffffffffffffff', ' 3', '3 3']) + `${CRLF}abc${CRLF}0${CRLF}${CRLF}`),
          ),
          { end: true },
        ],
        { kind: 'error', reason: BROKEN },
      );
    case 'chunked cut': {
      // the chunked body stops somewhere before its last chunk, then the host closes
      const whole = chunked(rng, body);
      return done(
        [...send(`${statusLine}Transfer-Encoding: chunked${CRLF}${CRLF}`, whole.subarray(0, rng.int(Math.max(1, whole.length - 5)))), { end: true }],
        refused({ kind: 'error', reason: overCap ? anyOf(TOO_LARGE, CUT, REFUSED) : BROKEN }),
      );
    }
    case 'chunked stall': {
      const whole = chunked(rng, body);
      return done(
        [...send(`${statusLine}Transfer-Encoding: chunked${CRLF}${CRLF}`, whole.subarray(0, whole.length - 5)), { wait: stall }],
        refused({ kind: 'error', reason: overCap ? anyOf(TOO_LARGE, TIMED_OUT) : TIMED_OUT }),
        true,
      );
    }
    case 'close then stall': // no Content-Length, the host stops sending and never closes
      return done(
        [...send(`${statusLine}${CRLF}`, body.subarray(0, cut)), { wait: stall }],
        refused({ kind: 'error', reason: cut > limits.maxBytes ? TOO_LARGE : TIMED_OUT }),
        true,
      );
    case 'two lengths':
      return done([...send(`${statusLine}Content-Length: ${body.length}${CRLF}Content-Length: ${body.length + 1}${CRLF}${CRLF}`, body), { end: true }], {
        kind: 'error',
        reason: BROKEN,
      });
    case 'length and chunked':
      return done([...send(`${statusLine}Content-Length: ${body.length}${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}`, chunked(rng, body)), { end: true }], {
        kind: 'error',
        reason: BROKEN,
      });
    case 'declared over the cap':
      return done(
        [...send(`${statusLine}Content-Length: ${limits.maxBytes + 1}${CRLF}${CRLF}`, body.subarray(0, 10)), { wait: stall }],
        refused({ kind: 'error', reason: TOO_LARGE }),
      );
    case 'drip then stall': {
      // a byte at a time, slowly, past the timeout
      const bytes = Buffer.from(`${statusLine}Content-Length: ${body.length}${CRLF}${CRLF}`);
      const steps: Step[] = [];
      const n = Math.min(bytes.length, 60); // the rest of a longer head never comes
      for (let i = 0; i < n; i++) steps.push({ write: bytes.subarray(i, i + 1) }, { wait: Math.ceil(stall / n) });
      return done(steps, { kind: 'error', reason: anyOf(TIMED_OUT, REFUSED) }, true);
    }
    case 'reset after body': // the body is complete; whether the reset or the bytes are read first is a race
      return done(
        [...send(`${statusLine}Content-Length: ${body.length}${CRLF}${CRLF}`, body), { reset: true }],
        extra.bad ? { kind: 'error', reason: anyOf(REFUSED, RESET) } : overCap ? { kind: 'error', reason: anyOf(TOO_LARGE, RESET) } : { kind: 'either', body },
      );
    default: // 'reset mid body'
      return done([...send(`${statusLine}Content-Length: ${body.length + 10}${CRLF}${CRLF}`, body.subarray(0, cut)), { reset: true }], {
        kind: 'error',
        reason: anyOf(BROKEN, TOO_LARGE),
      });
  }
}
