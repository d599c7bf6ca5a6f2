// What the fault benches share: the row a fault under a request stream reports, the error code of an
// answer, and filling a filesystem to its last page.

import fs from 'node:fs';

/** A fault's row in bench:faults' table: the statuses, cuts and credits of the requests under it. */
export interface StreamRow {
  skipped?: string;
  faultMs?: number;
  requests?: number;
  statuses?: Record<string, number>;
  codes?: Record<string, number>;
  cuts?: number;
  errors500?: number;
  credits?: { fromHeaders: number; balanceFall: number; exact: boolean };
  firstOkAfterS?: number | null;
  late429?: number;
  slowUploads?: string[];
  memory?: { limitMb: number; peakMb: number | null; oomKills: number; alive: boolean };
}

/** The remove.bg error code of a non-200 answer's body; '' for none, 'not-json' for a body that is not the envelope. */
export function errorCodeOf(body: Buffer): string {
  try {
    return (JSON.parse(body.toString()) as { errors?: Array<{ code?: string }> }).errors?.[0]?.code ?? '';
  } catch {
    return 'not-json';
  }
}

/** Fill `file` until the filesystem refuses: a megabyte at a time, then page by page. */
export function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  const mb = Buffer.alloc(1 << 20, 1);
  try {
    for (;;) fs.writeSync(fd, mb);
  } catch {
    // ENOSPC
  }
  try {
    for (;;) fs.writeSync(fd, mb, 0, 4096);
  } catch {
    // the last pages
  }
  fs.closeSync(fd);
}
