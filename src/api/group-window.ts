// The sandbox window of a process of `serve --processes N`: its supervisor counts every process's
// requests in one window (cli/group-hub.ts), so a client gets its N requests a minute from the
// group, not N from each process its connections happen to reach. If the supervisor does not
// answer, the process counts in a window of its own rather than refuse or wait.

import type { RateDecision } from '../ledger/ledger.js';
import { GroupUnavailableError, type GroupClient } from '../process/group-client.js';
import type { ClientWindow } from './client-window.js';
import type { RateWindow } from './sandbox.js';

export class GroupWindow implements RateWindow {
  constructor(
    private readonly group: GroupClient,
    private readonly fallback: ClientWindow,
  ) {}

  async take(client: string): Promise<RateDecision> {
    try {
      return await this.group.ask({ what: 'sandbox-take', client });
    } catch (err) {
      if (err instanceof GroupUnavailableError) return this.fallback.take(client);
      throw err;
    }
  }
}
