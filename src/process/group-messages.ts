// What `serve --processes N`'s supervisor and its processes say to each other over node's IPC
// channel (JSON), besides the reconcile request (cli/supervisor.ts): a process asks the group for
// what one process alone cannot know (the whole group's metrics, the sandbox's per-client window),
// and the supervisor collects each process's metrics for such a question.

import type { RateDecision } from '../ledger/ledger.js';
import type { MetricJson } from './metric-json.js';

/** A question a process asks its supervisor. */
export type GroupQuestion = { what: 'metrics' } | { what: 'sandbox-take'; client: string };

/** The answers, by question. */
export interface GroupAnswers {
  /** Each process's metrics (its latest answer where it was too slow), and what ended processes counted. */
  metrics: MetricJson[][];
  'sandbox-take': RateDecision;
}

/** process → supervisor */
export interface AskMessage {
  type: 'cutout:ask';
  id: number;
  question: GroupQuestion;
}
/** supervisor → process */
export interface AnswerMessage {
  type: 'cutout:answer';
  id: number;
  value?: unknown;
  error?: string;
}
/** supervisor → process: send your registry for round `round`. */
export interface CollectMetricsMessage {
  type: 'cutout:collect-metrics';
  round: number;
}
/** process → supervisor */
export interface MetricsPartMessage {
  type: 'cutout:metrics-part';
  round: number;
  metrics: MetricJson[];
}

/** Node's IPC channel as both ends see it (`process` in a child, a ChildProcess in the supervisor). */
export interface IpcChannel {
  send?(message: unknown, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

export function messageType(message: unknown): string | undefined {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? type : undefined;
}
