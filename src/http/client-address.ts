// Who is asking, for per-client limits and the log line: the socket's address, or behind a reverse
// proxy (`--trust-proxy`) the last X-Forwarded-For entry, which is the one that proxy appended. A
// forged entry further left is never read; an entry that is not a plain IP address is ignored.

import { isIP } from 'node:net';

/** IPv6 in its short form; an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, dual-stack sockets) as IPv4. */
export function normalizeAddress(address: string): string {
  const kind = isIP(address);
  if (kind === 4) return address;
  if (kind !== 6) return address;
  const short = new URL(`http://[${address}]/`).hostname.slice(1, -1).toLowerCase();
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(short);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return short;
}

/** The client's address (normalised). `forwardedFor` is read only when `trustProxy`. */
export function clientAddress(socketAddress: string, forwardedFor: string | undefined, trustProxy: boolean): string {
  if (trustProxy && forwardedFor !== undefined) {
    const last = forwardedFor.slice(forwardedFor.lastIndexOf(',') + 1).trim();
    if (isIP(last) !== 0) return normalizeAddress(last);
  }
  return normalizeAddress(socketAddress);
}

/**
 * The unit a per-client limit counts: an IPv4 address, or an IPv6 /64 (one subscriber's network:
 * a single host can take any number of addresses inside it).
 */
export function addressGroup(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::', 2) as [string, string?];
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
