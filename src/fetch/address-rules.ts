// Which IP addresses an image_url may reach (rembg's _validate_url rules). Pure.
// Anything not globally routable is refused: loopback, private, link-local, CGNAT, multicast,
// reserved, documentation, unspecified; IPv4-mapped/6to4/NAT64 IPv6 forms are judged by the IPv4
// address they embed. Any other IPv6 address must be global unicast (2000::/3), so forms nobody
// listed (IPv4-translated ::ffff:0:0/96, IPv4-compatible ::a.b.c.d) are refused too.

import { isIP } from 'node:net';

type Rule = readonly [prefix: readonly number[], bits: number, reason: string];

const V4_RULES: readonly Rule[] = [
  [[0], 8, 'unspecified'],
  [[10], 8, 'private'],
  [[100, 64], 10, 'shared (CGNAT)'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local'],
  [[172, 16], 12, 'private'],
  [[192, 0, 0], 24, 'reserved'],
  [[192, 0, 2], 24, 'reserved (documentation)'],
  [[192, 88, 99], 24, 'reserved (6to4 relay)'],
  [[192, 168], 16, 'private'],
  [[198, 18], 15, 'reserved (benchmarking)'],
  [[198, 51, 100], 24, 'reserved (documentation)'],
  [[203, 0, 113], 24, 'reserved (documentation)'],
  [[224], 4, 'multicast'],
  [[240], 4, 'reserved'],
];

const V6_RULES: readonly Rule[] = [
  [[], 128, 'unspecified'], // ::/128 (all zero bytes)
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 96, 'reserved (IPv4-translated)'], // ::ffff:0:0/96 (SIIT)
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'reserved (local NAT64)'],
  [[1, 0, 0, 0, 0, 0, 0, 0], 64, 'reserved (discard)'],
  [[0x20, 0x01, 0, 0], 32, 'reserved (Teredo)'],
  [[0x20, 0x01, 0, 2, 0, 0], 48, 'reserved (benchmarking)'],
  [[0x20, 0x01, 0, 0x10], 28, 'reserved (ORCHID)'],
  [[0x20, 0x01, 0, 0x20], 28, 'reserved (ORCHIDv2)'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'reserved (documentation)'],
  [[0x3f, 0xff], 20, 'reserved (documentation)'],
  [[0xfc], 7, 'private (unique local)'],
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'private (site-local)'],
  [[0xff], 8, 'multicast'],
];

function matches(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const i = bit >> 3;
    const take = Math.min(8, bits - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

export function parseIPv4(ip: string): Uint8Array | null {
  if (isIP(ip) !== 4) return null;
  return Uint8Array.from(ip.split('.').map(Number));
}

/** 16 bytes for any textual IPv6 form (`::`, embedded dotted quad, zone id dropped). */
export function parseIPv6(ip: string): Uint8Array | null {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) !== 6) return null;
  let text = bare;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    // Rewrite an embedded dotted quad (::ffff:1.2.3.4) as two hex groups.
    const v4 = parseIPv4(dotted[1]!);
    if (!v4) return null;
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    text = `${text.slice(0, -dotted[1]!.length)}${hex(v4[0]!, v4[1]!)}:${hex(v4[2]!, v4[3]!)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((h) => (/^[0-9a-f]{1,4}$/i.test(h) ? parseInt(h, 16) : NaN)));
  const h = parse(halves[0]!);
  const r = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - h.length - r.length : 0;
  if (fill < 0) return null;
  const groups = [...h, ...new Array<number>(fill).fill(0), ...r];
  if (groups.length !== 8 || groups.some((g) => Number.isNaN(g))) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/**
 * The IPv4 address an IPv6 address stands for (mapped, compatible, 6to4, NAT64), if any, and whether
 * that form may be fetched from when the IPv4 address is public (not the deprecated compatible one).
 */
function embeddedIPv4(b: Uint8Array): { v4: Uint8Array; usable: boolean } | null {
  const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4: b.slice(12, 16), usable: true }; // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 16) && !(zeros(12, 15) && b[15] === 1)) return { v4: b.slice(12, 16), usable: false }; // ::a.b.c.d
  if (b[0] === 0x20 && b[1] === 0x02) return { v4: b.slice(2, 6), usable: true }; // 2002:AABB:CCDD::/16 (6to4)
  if (matches(b, [0, 0x64, 0xff, 0x9b], 96)) return { v4: b.slice(12, 16), usable: true }; // 64:ff9b::/96 (NAT64)
  return null;
}

function classifyV4(b: Uint8Array): string | null {
  for (const [prefix, bits, reason] of V4_RULES) if (matches(b, prefix, bits)) return reason;
  return null;
}

/**
 * Why `ip` must not be fetched from ('loopback', 'private', …), or null when it is public.
 * Text that is not an IP address is refused as 'invalid'.
 */
export function blockedReason(ip: string): string | null {
  const v4 = parseIPv4(ip);
  if (v4) return classifyV4(v4);
  const v6 = parseIPv6(ip);
  if (!v6) return 'invalid';
  const inner = embeddedIPv4(v6);
  if (inner) {
    const reason = classifyV4(inner.v4);
    if (reason !== null) return `${reason} (IPv4 embedded in IPv6)`;
    if (inner.usable) return null;
  }
  for (const [prefix, bits, reason] of V6_RULES) if (matches(v6, prefix, bits)) return reason;
  // Only global unicast is left to allow: whatever else IANA reserves (or later assigns) stays out.
  if (!matches(v6, [0x20], 3)) return 'reserved (not global unicast)';
  return null;
}

/** Loopback only (127.0.0.0/8, ::1, ::ffff:127.x): what `allowLoopback` lets through in tests. */
export function isLoopback(ip: string): boolean {
  const reason = blockedReason(ip);
  return reason === 'loopback' || reason === 'loopback (IPv4 embedded in IPv6)';
}
