// The supervisor's side of what the processes of `serve --processes N` share (process/group-client.ts
// asks): one sandbox window per client for the whole group, and the group's metrics. For a scrape,
// the hub asks every live process for its registry and answers with all of them once each has
// answered or `collectTimeoutMs` has passed; a process too slow to answer counts with its latest
// answer, so a busy process never makes a counter go back. A process that ends leaves its counters
// and histograms (its latest answer's) to the group, so a restart does not make them go back either;
// what it counted after its latest answer is lost with it.

import { ClientWindow, MAX_CLIENTS_PER_WINDOW } from '../api/client-window.js';
import { countsOf, isMetricParts, mergeMetrics, type MetricJson } from '../observe/metrics-merge.js';
import {
  messageType,
  type AnswerMessage,
  type AskMessage,
  type CollectMetricsMessage,
  type IpcChannel,
  type MetricsPartMessage,
} from '../process/group-messages.js';

export interface GroupHubOptions {
  /** The sandbox's requests per client and minute (--sandbox-rate-per-minute). */
  sandboxRatePerMinute: number;
  /** How long a scrape waits for the processes' registries (default 1 s). */
  collectTimeoutMs?: number;
  /** Wall clock of the sandbox window (tests). */
  now?: () => number;
}

interface Member {
  channel: IpcChannel;
  listener: (message: unknown) => void;
  /** Its latest registry. */
  latest: MetricJson[] | null;
}

interface Round {
  asker: { index: number; id: number };
  waiting: Set<number>;
  got: Map<number, MetricJson[]>;
  timer: ReturnType<typeof setTimeout>;
}

/** Longest client key the sandbox window takes (an IPv6 /64 group is far shorter). */
const MAX_CLIENT_KEY = 100;

export class GroupHub {
  private readonly members = new Map<number, Member>();
  private readonly rounds = new Map<number, Round>();
  private nextRound = 1;
  /** Counters and histograms of the processes that ended. */
  private retired: MetricJson[] = [];
  private readonly window: ClientWindow;
  private readonly collectTimeoutMs: number;

  constructor(opts: GroupHubOptions) {
    this.window = new ClientWindow(opts.sandboxRatePerMinute, MAX_CLIENTS_PER_WINDOW, opts.now);
    this.collectTimeoutMs = opts.collectTimeoutMs ?? 1_000;
  }

  /** Process `index` started (again). */
  join(index: number, channel: IpcChannel): void {
    this.leave(index);
    const listener = (message: unknown) => this.onMessage(index, message);
    channel.on('message', listener);
    this.members.set(index, { channel, listener, latest: null });
  }

  /** Process `index` ended: its counts stay with the group; no round waits for it any longer. */
  leave(index: number): void {
    const member = this.members.get(index);
    if (!member) return;
    member.channel.off('message', member.listener);
    this.members.delete(index);
    if (member.latest) this.retired = mergeMetrics([this.retired, countsOf(member.latest)]);
    for (const [id, round] of this.rounds) {
      // Its answer to an open round is in `retired` now: counted once.
      round.got.delete(index);
      round.waiting.delete(index);
      if (round.waiting.size === 0) this.finish(id, round);
    }
  }

  close(): void {
    for (const round of this.rounds.values()) clearTimeout(round.timer);
    this.rounds.clear();
    for (const index of [...this.members.keys()]) this.leave(index);
  }

  private onMessage(index: number, message: unknown): void {
    const type = messageType(message);
    if (type === 'cutout:ask') this.onAsk(index, message as AskMessage);
    else if (type === 'cutout:metrics-part') this.onPart(index, message as MetricsPartMessage);
  }

  private onAsk(index: number, { id, question }: AskMessage): void {
    if (question?.what === 'sandbox-take') {
      const client = question.client;
      if (typeof client !== 'string' || client.length > MAX_CLIENT_KEY) this.answer(index, { type: 'cutout:answer', id, error: 'bad client key' });
      else this.answer(index, { type: 'cutout:answer', id, value: this.window.take(client) });
    } else if (question?.what === 'metrics') {
      this.collect(index, id);
    } else {
      this.answer(index, { type: 'cutout:answer', id, error: 'unknown question' });
    }
  }

  private collect(index: number, id: number): void {
    const roundId = this.nextRound++;
    const round: Round = {
      asker: { index, id },
      waiting: new Set(this.members.keys()),
      got: new Map(),
      timer: setTimeout(() => this.finish(roundId, round), this.collectTimeoutMs),
    };
    round.timer.unref();
    this.rounds.set(roundId, round);
    const ask: CollectMetricsMessage = { type: 'cutout:collect-metrics', round: roundId };
    for (const [i, member] of this.members) {
      if (!send(member.channel, ask)) round.waiting.delete(i);
    }
    if (round.waiting.size === 0) this.finish(roundId, round);
  }

  private onPart(index: number, { round: roundId, metrics }: MetricsPartMessage): void {
    const member = this.members.get(index);
    if (!member || !isMetricParts(metrics)) return;
    member.latest = metrics;
    const round = this.rounds.get(roundId);
    if (!round?.waiting.delete(index)) return;
    round.got.set(index, metrics);
    if (round.waiting.size === 0) this.finish(roundId, round);
  }

  private finish(roundId: number, round: Round): void {
    if (!this.rounds.delete(roundId)) return;
    clearTimeout(round.timer);
    const parts: MetricJson[][] = [];
    for (const [i, member] of this.members) {
      const part = round.got.get(i) ?? member.latest;
      if (part) parts.push(part);
    }
    if (this.retired.length > 0) parts.push(this.retired);
    this.answer(round.asker.index, { type: 'cutout:answer', id: round.asker.id, value: parts });
  }

  private answer(index: number, message: AnswerMessage): void {
    const member = this.members.get(index);
    if (member) send(member.channel, message);
  }
}

/** false when there is no channel to send on; a send that fails later is a process on its way out (leave). */
function send(channel: IpcChannel, message: unknown): boolean {
  if (!channel.send) return false;
  try {
    channel.send(message, () => {});
    return true;
  } catch {
    return false;
  }
}
