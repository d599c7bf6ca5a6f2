// Who holds a reservation or slot: pid plus a start token, so a recycled pid is not mistaken for the
// original owner. All processes sharing a data folder must share one pid namespace (one host/container).

import { readFileSync } from 'node:fs';

export interface Owner {
  pid: number;
  /** `<boot id>:<start time in clock ticks>` on Linux; '' where /proc is unavailable. */
  token: string;
}

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

interface ProcStat {
  state: string;
  startTime: string;
}

/** Fields of /proc/<pid>/stat after the `(comm)` field, which may itself contain spaces and parens. */
function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is stat field 3 (state); start time is field 22.
  return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
}

const bootId = readBootId();
const hasProc = bootId !== '' && readProcStat(process.pid) !== null;

function tokenFor(pid: number): string | null {
  if (!hasProc) return '';
  const stat = readProcStat(pid);
  if (!stat) return null;
  // A zombie is dead for our purposes: it will never settle or release.
  if (stat.state === 'Z' || stat.state === 'X') return null;
  return `${bootId}:${stat.startTime}`;
}

export const SELF: Readonly<Owner> = Object.freeze({ pid: process.pid, token: tokenFor(process.pid) ?? '' });

export function isSelf(owner: Owner): boolean {
  return owner.pid === SELF.pid && owner.token === SELF.token;
}

/** True when the process that wrote `owner` is still running. */
export function isOwnerAlive(owner: Owner): boolean {
  if (isSelf(owner)) return true;
  if (hasProc) return tokenFor(owner.pid) === owner.token;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
