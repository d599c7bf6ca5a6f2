// `cutout serve|remove --model-file isnet-int8.onnx --model-family birefnet`: the file loads and runs,
// and the start says, on stderr, that its mask is a probability already (families.ts familyWarnings).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import t from 'tap';
import { runRemoveCommand } from '../../src/cli/remove-command.js';
import { MODELS_DIR } from '../../src/model/manifest.js';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));

const file = path.join(MODELS_DIR, 'isnet-int8.onnx');
const WARNING =
  "does not look like a birefnet file: the mask output 'output' comes out of a Sigmoid: it is a probability already, " +
  'but family birefnet reads it as logits and applies a sigmoid again (the mask would never fall below 0.5). An ISNet, U²-Net or RMBG-1.4 file? Give --model-family isnet, u2net or rmbg';

t.test('an ISNet file given as birefnet: a warning at start', async (t) => {
  const child = spawn(
    process.execPath,
    [
      ENTRY,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data',
      t.testdir(),
      '--workers',
      '1',
      '--no-demo-key',
      '--device',
      'cpu',
      '--model-file',
      file,
      '--model-family',
      'birefnet',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/^metrics: /m.test(out)) resolve(); // the last start-up line
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
  t.match(out, /^model isnet-int8\.onnx: family birefnet, sha256 [0-9a-f]{64}$/m, 'it runs as given');
  // stderr is a pipe of its own: read it whole once the process has stopped.
  child.kill('SIGTERM');
  t.equal(await exit, 0);
  t.equal(err.trim(), `cutout serve: warning: model isnet-int8.onnx ${WARNING}`);
});

t.test('cutout remove says the same before its first photo', async (t) => {
  const dir = t.testdir();
  const photo = path.join(dir, 'photo.png');
  await sharp({ create: { width: 96, height: 64, channels: 3, background: '#3a7' } })
    .png()
    .toFile(photo);
  const err: string[] = [];
  const io = { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) } };
  const code = await runRemoveCommand(
    ['--model-file', file, '--model-family', 'birefnet', '--workers', '1', '--device', 'cpu', '-o', path.join(dir, 'out'), photo],
    io,
  );
  t.equal(code, 0, err.join(''));
  t.equal(err[0], `cutout: warning: model isnet-int8.onnx ${WARNING}\n`);
});
