// A process of `serve --processes N` asking its supervisor (cli/group-hub.ts) what only the whole
// group knows, and answering its collection rounds with its own metrics. Questions time out: a
// supervisor that does not answer (gone, or stuck) fails them, and each caller decides what that
// means (metrics: 503; the sandbox window: this process's own count).

import type { MetricJson } from './metric-json.js';
import {
  messageType,
  type AnswerMessage,
  type AskMessage,
  type CollectMetricsMessage,
  type GroupAnswers,
  type GroupQuestion,
  type IpcChannel,
  type MetricsPartMessage,
} from './group-messages.js';

export class GroupUnavailableError extends Error {
  constructor(reason: string) {
    super(`the process group did not answer (${reason})`);
    this.name = 'GroupUnavailableError';
  }
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class GroupClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private collect: (() => Promise<MetricJson[]>) | null = null;

  constructor(
    private readonly channel: IpcChannel,
    private readonly timeoutMs = 2_000,
  ) {
    channel.on('message', this.onMessage);
    channel.on('disconnect', this.onDisconnect);
  }

  ask<Q extends GroupQuestion>(question: Q): Promise<GroupAnswers[Q['what']]> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const fail = (reason: string) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        reject(new GroupUnavailableError(reason));
      };
      const timer = setTimeout(() => fail(`no answer in ${this.timeoutMs} ms`), this.timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      const message: AskMessage = { type: 'cutout:ask', id, question };
      try {
        if (!this.channel.send) return fail('no IPC channel');
        this.channel.send(message, (err) => {
          if (err) fail(err.message);
        });
      } catch (err) {
        fail((err as Error).message);
      }
    });
  }

  /** Answer the supervisor's collection rounds with `snapshot()` (this process's registry). */
  answerMetrics(snapshot: () => Promise<MetricJson[]>): void {
    this.collect = snapshot;
  }

  close(): void {
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    this.onDisconnect();
  }

  private readonly onMessage = (message: unknown): void => {
    const type = messageType(message);
    if (type === 'cutout:answer') {
      const m = message as AnswerMessage;
      const p = this.pending.get(m.id);
      if (!p) return; // timed out already
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error !== undefined) p.reject(new GroupUnavailableError(m.error));
      else p.resolve(m.value);
    } else if (type === 'cutout:collect-metrics' && this.collect) {
      const { round } = message as CollectMetricsMessage;
      this.collect().then(
        (metrics) => {
          const part: MetricsPartMessage = { type: 'cutout:metrics-part', round, metrics };
          try {
            this.channel.send?.(part, () => {});
          } catch {
            // The channel closed: the supervisor is gone, and this process stops with it.
          }
        },
        () => {},
      );
    }
  };

  private readonly onDisconnect = (): void => {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new GroupUnavailableError('the supervisor is gone'));
    }
  };
}
