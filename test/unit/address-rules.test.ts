// fetch/address-rules.ts: which addresses image_url may reach (rembg's SSRF rules).
import t from 'tap';
import { blockedReason, isLoopback, parseIPv6 } from '../../src/fetch/address-rules.js';

t.test('IPv4 refused', async (t) => {
  const cases: Record<string, RegExp> = {
    '127.0.0.1': /loopback/,
    '127.255.1.2': /loopback/,
    '10.1.2.3': /private/,
    '172.16.0.1': /private/,
    '172.31.255.255': /private/,
    '192.168.1.1': /private/,
    '169.254.169.254': /link-local/,
    '0.0.0.0': /unspecified/,
    '100.64.0.1': /CGNAT/,
    '224.0.0.1': /multicast/,
    '239.255.255.250': /multicast/,
    '240.0.0.1': /reserved/,
    '255.255.255.255': /reserved/,
    '192.0.2.1': /documentation/,
    '198.18.0.1': /benchmarking/,
    '192.0.0.8': /reserved/,
  };
  for (const [ip, re] of Object.entries(cases)) t.match(blockedReason(ip), re, ip);
});

t.test('IPv4 allowed', async (t) => {
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.128.0.1', '93.184.216.34', '223.255.255.255']) {
    t.equal(blockedReason(ip), null, ip);
  }
});

t.test('IPv6 refused, including IPv4 embedded forms', async (t) => {
  const cases: Record<string, RegExp> = {
    '::1': /loopback/,
    '::': /unspecified/,
    '[::1]': /loopback/,
    'fe80::1': /link-local/,
    'fe80::1%eth0': /link-local/,
    'fc00::1': /unique local/,
    'fd12:3456::1': /unique local/,
    'ff02::1': /multicast/,
    'fec0::1': /site-local/,
    '::ffff:127.0.0.1': /loopback/,
    '::ffff:7f00:1': /loopback/,
    '::ffff:169.254.169.254': /link-local/,
    '::ffff:10.0.0.1': /private/,
    '::127.0.0.1': /loopback/,
    '2002:7f00:1::': /loopback/,
    '2001:db8::1': /documentation/,
    '64:ff9b::a00:1': /private/,
    '2001::1': /Teredo/,
    '100::1': /discard/,
  };
  for (const [ip, re] of Object.entries(cases)) t.match(blockedReason(ip), re, ip);
});

t.test('IPv4-translated (::ffff:0:0/96) and anything else outside global unicast refused', async (t) => {
  const cases: Record<string, RegExp> = {
    '::ffff:0:127.0.0.1': /IPv4-translated/,
    '::ffff:0:7f00:1': /IPv4-translated/,
    '::ffff:0:a9fe:a9fe': /IPv4-translated/,
    '::ffff:0:8.8.8.8': /IPv4-translated/,
    '::8.8.8.8': /not global unicast/,
    '4000::1': /not global unicast/,
    'e000::1': /not global unicast/,
    '100:0:0:1::1': /not global unicast/,
    '64:ff9b:2::1': /not global unicast/,
  };
  for (const [ip, re] of Object.entries(cases)) t.match(blockedReason(ip), re, ip);
});

t.test('IPv6 allowed', async (t) => {
  for (const ip of ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
    t.equal(blockedReason(ip), null, ip);
  }
});

t.test('not an IP', async (t) => {
  t.equal(blockedReason('example.com'), 'invalid');
  t.equal(blockedReason('1.2.3'), 'invalid');
  t.equal(blockedReason('::g'), 'invalid');
});

t.test('loopback exemption covers loopback only', async (t) => {
  t.ok(isLoopback('127.0.0.1'));
  t.ok(isLoopback('::1'));
  t.ok(isLoopback('::ffff:127.0.0.1'));
  t.notOk(isLoopback('10.0.0.1'));
  t.notOk(isLoopback('169.254.169.254'));
  t.notOk(isLoopback('8.8.8.8'));
});

t.test('parseIPv6', async (t) => {
  t.same([...parseIPv6('::ffff:1.2.3.4')!], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
  t.same([...parseIPv6('1::')!].slice(0, 2), [0, 1]);
  t.equal(parseIPv6('1:2:3:4:5:6:7:8:9'), null);
});
