// Child-process entry for serve-command tests: `node serve-entry.js [serve flags]`.
import { runServeCommand } from '../../src/cli/serve-command.js';

runServeCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`serve-entry: ${err.stack ?? err.message}\n`);
    process.exitCode = 1;
  },
);
