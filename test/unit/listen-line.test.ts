// The start line names the address bound (cli/listen-line.ts), and for a wildcard bind the local URL.
import t from 'tap';
import { listeningLine, localHint } from '../../src/cli/listen-line.js';

t.test('the bound host, with the URL to open after a wildcard bind', async (t) => {
  t.equal(listeningLine('http://127.0.0.1:8080', '0.0.0.0', 8080), 'cutout listening on http://0.0.0.0:8080');
  t.equal(localHint('http://127.0.0.1:8080', '0.0.0.0'), '; every IPv4 interface: open http://127.0.0.1:8080/ on this machine');
  t.equal(listeningLine('https://127.0.0.1:8443', '::', 8443), 'cutout listening on https://[::]:8443');
  t.equal(localHint('https://127.0.0.1:8443', '::'), '; every interface: open https://127.0.0.1:8443/ on this machine');
});

t.test('a named host is printed as it is, with no hint', async (t) => {
  t.equal(listeningLine('http://127.0.0.1:41234', '127.0.0.1', 41234), 'cutout listening on http://127.0.0.1:41234');
  t.equal(localHint('http://127.0.0.1:41234', '127.0.0.1'), '');
  t.equal(listeningLine('http://[::1]:8080', '::1', 8080), 'cutout listening on http://[::1]:8080');
  t.equal(listeningLine('http://10.0.0.5:8080', '10.0.0.5', 8080), 'cutout listening on http://10.0.0.5:8080');
});
