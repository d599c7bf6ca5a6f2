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

  constructor(private readonly res: PausableBody) {
    res.onData((chunk, isLast) => {
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

  /** Always, even when the whole body is in: the socket stays paused otherwise, and keep-alive with it. */
  private unpause(): void {
    if (!this.paused) return;
    this.paused = false;
    this.res.resume();
  }
}
