// Stand-in for `cutout serve` under a supervisor (test/integration/supervisor-crashes): no model,
// starts in milliseconds. TEST_CRASH=<index>|all: that process exits with code 3 as soon as it starts.
// TEST_SLOW_STOP=1: SIGTERM only prints "draining" (a drain that does not end). Otherwise it serves
// until SIGTERM and prints what its supervisor asks of it.
const index = process.env.CUTOUT_PROCESS_INDEX ?? '?';
const say = (line: string) => void process.stdout.write(`child ${index} ${line}\n`);

if (process.env.TEST_CRASH === index || process.env.TEST_CRASH === 'all') {
  say('crashing');
  process.exit(3);
}
say(`serving (pid ${process.pid})`);
process.on('message', (m: { type?: string }) => say(`got ${m.type}`));
process.on('SIGTERM', () => {
  if (process.env.TEST_SLOW_STOP === '1') {
    say('draining');
    return;
  }
  say('stopping');
  process.exit(0);
});
setInterval(() => {}, 1 << 30);
