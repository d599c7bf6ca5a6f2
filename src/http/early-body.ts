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

  /** Body bytes that have arrived so far (whoever read them). */
  received = 0;

  /** The stream stays paused past the body's end until the answer (see unpause). */
  private resumeAtAnswer = false;

  constructor(private readonly res: PausableBody) {
    res.onData((chunk, isLast) => {
      this.received += chunk.byteLength;
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
    for (const [i, chunk] of held.entries()) handler(chunk, this.last && i === held.length - 1);
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

  /**
   * Restart uWS's idle timer of the connection (pause + resume does; checked on uWS 20.30). uWS closes a
   * body slower than 160 kB per 10 s without an answer; the context keeps such an upload open until its
   * own rule (RequestContext.watchUpload) answers it with a 408. No-op while paused (the stream has no timer then).
   */
  keepAlive(): void {
    if (this.paused || this.ended) return;
    this.res.pause();
    this.res.resume();
  }

  /**
   * Resume the stream, or, once the whole body is in, at the answer (beforeAnswer): uWS's resume() arms
   * the connection's 10 s idle timer, which only the body's last chunk clears, so a resume after that
   * chunk closes the connection, unanswered, 8–12 s later if the request is still being worked on
   * (shown on uWS 20.30: requests cut with "status 0, aborted").
   */
  private unpause(): void {
    if (!this.paused) return;
    if (this.ended) {
      this.resumeAtAnswer = true;
      return;
    }
    this.paused = false;
    this.res.resume();
  }

  /** Inside the answer's cork, before it ends: a stream kept paused past the body's end resumes for keep-alive. */
  beforeAnswer(): void {
    if (!this.resumeAtAnswer) return;
    this.resumeAtAnswer = false;
    this.paused = false;
    this.res.resume();
  }
}
