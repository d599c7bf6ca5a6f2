// `node serve-loopback-entry.js [serve flags]`: `cutout serve` whose image_url and bg_image_url
// downloads may reach loopback, for the tests and benches whose image hosts listen on 127.0.0.1
// (test/helpers/ledger-procs.ts, test/harness/fuzz-fetch-driver.ts). The product has no flag or env var for
// this: set by mistake on a real server it would open an SSRF door. With --processes N the
// supervisor forks this module again for each process, so every process allows it.
import '../../src/process/threadpool-size.js'; // first, as in the CLI: before anything starts libuv's thread pool
import { runServeCommand } from '../../src/cli/serve-command.js';

runServeCommand(process.argv.slice(2), { fetchOptions: { allowLoopback: true }, childEntry: new URL(import.meta.url) }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`serve-loopback-entry: ${err.stack ?? err.message}\n`);
    process.exitCode = 1;
  },
);
