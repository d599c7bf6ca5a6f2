#!/usr/bin/env node
// The `cutout` command: dispatches to one module per verb.
import '../process/threadpool-size.js'; // first: before anything starts libuv's thread pool
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../model/manifest.js';

const USAGE = `cutout: self-hosted background removal with the remove.bg v1.0 API

Usage:
  cutout serve [--host H] [--port P] [--data DIR] [--workers N] [--model NAME] [--device auto|cpu|cuda[:N]]
               [--quality fast|balanced|best] [--processes N] [--tls-cert F --tls-key F] [--ledger postgres://…] …
  cutout remove <file|dir>... [-o OUT] [--size SIZE] [--format FMT] [--bg-color HEX] [--model NAME] [--device D] …
  cutout keys create|list|revoke|credit ...   (manage API keys: the data folder's ledger, or --ledger postgres://…)
  cutout usage [--since DATE|DAYS] [--json] [--ledger postgres://…]
  cutout model --from FILE --int8 [--model-family F] [--out FILE] …   (your own fp32 or fp16 ONNX model to int8)
  cutout --version

Run 'cutout <command> --help' for a command's options.`;

async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case 'remove':
      return (await import('./remove-command.js')).runRemoveCommand(rest);
    case 'serve':
      return (await import('./serve-command.js')).runServeCommand(rest);
    case 'model':
      return (await import('./quantize-file-cli.js')).runQuantizeFileCli(rest);
    case 'keys':
    case 'usage': {
      const dataDir = process.env.CUTOUT_DATA_DIR ?? path.resolve('data');
      const io = {
        stdout: (s: string) => void process.stdout.write(s),
        stderr: (s: string) => void process.stderr.write(s),
        dataDir,
        ledgerUrl: process.env.CUTOUT_LEDGER_URL,
      };
      const dataFlag = rest.findIndex((a) => a === '--data' || a.startsWith('--data='));
      if (dataFlag >= 0 && rest[dataFlag]!.startsWith('--data=')) {
        io.dataDir = path.resolve(rest[dataFlag]!.slice('--data='.length));
        rest.splice(dataFlag, 1);
      } else if (dataFlag >= 0 && rest[dataFlag + 1]) {
        io.dataDir = path.resolve(rest[dataFlag + 1]!);
        rest.splice(dataFlag, 2);
      }
      return verb === 'keys' ? (await import('./keys-command.js')).runKeysCommand(rest, io) : (await import('./usage-command.js')).runUsageCommand(rest, io);
    }
    case '--version':
    case '-v':
      process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')).version}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return verb === undefined ? 2 : 0;
    default:
      process.stderr.write(`cutout: unknown command '${verb}'\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`cutout: ${err.message}\n`);
    process.exitCode = 1;
  },
);
