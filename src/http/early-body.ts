// A request body that arrives while its handler still awaits something else (a ledger answering over
// the network, say) before it reads the body. uWS hands body chunks only to a data handler registered
// by then, and drops them otherwise, so the context registers this one with the request and pauses the
// stream: at most one socket read waits in memory (copied) until the handler reads the body, or answers
// without it (then the rest is discarded as uWS would, and the stream resumes for keep-alive).

import type { BodySource } from './body.js';

/** The slice of uWS HttpResponse this needs. */
export interface PausableBody {
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): unknown;
  pause(): void;
  resume(): void;
}

export class EarlyBody implements BodySource {
  private held: ArrayBuffer[] = [];
  private last = false;
  private paused = true;
  private sink: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;

  /** The body's last chunk has arrived. */
  private ended = false;

  constructor(private readonly res: PausableBody) {
    res.onData((chunk, isLast) => {
      if (isLast) this.ended = true;
      if (this.sink) return void this.sink(chunk, isLast);
      this.held.push(chunk.slice(0)); // copy now: uWS neuters the chunk on return
      this.last = isLast;
    });
    res.pause();
  }

  /** The body reader takes over: what arrived so far first, then the stream resumes. */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): void {
    this.sink = handler;
    const held = this.held;
    this.held = [];
    held.forEach((chunk, i) => handler(chunk, this.last && i === held.length - 1));
    this.unpause();
  }

  /** Answered without the body: drop what is held and what still comes. Call before the response ends. */
  discard(): void {
    if (this.sink) return;
    this.sink = () => {};
    this.held = [];
    this.unpause();
  }

  /** Every byte of the body has arrived (whoever read it). */
  get complete(): boolean {
    return this.ended;
  }

  /**
   * Answered before the body is in, on a connection uWS closes right after the answer: read the
   * rest first, dropping it, then call `then`, once: when the body has ended, more than `maxBytes`
   * were dropped, or `maxMs` passed. Closed with bytes still on their way, the connection is reset,
   * and a client still writing its body (node, python-requests) loses the answer to EPIPE/ECONNRESET.
   * Takes the body from whoever reads it.
   */
  drainThen(then: () => void, maxBytes: number, maxMs: number): void {
    let dropped = 0;
    let called = false;
    const go = () => {
      if (called) return;
      called = true;
      clearTimeout(timer);
      then();
    };
    const timer = setTimeout(go, maxMs);
    this.held = [];
    this.sink = (chunk, isLast) => {
      dropped += chunk.byteLength;
      if (isLast || dropped > maxBytes) go();
    };
    this.unpause();
    if (this.ended) go();
  }

  /** Always, even when the whole body is in: the socket stays paused otherwise, and keep-alive with it. */
  private unpause(): void {
    if (!this.paused) return;
    this.paused = false;
    this.res.resume();
  }
}
