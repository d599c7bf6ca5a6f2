// Whether a TCP port can be listened on, asked by binding it for a moment. Node sets no SO_REUSEPORT,
// so a port that another server holds (with or without SO_REUSEPORT) is refused here.
import net from 'node:net';

/** Null when host:port is free (port 0 always is); otherwise why it cannot be listened on. */
export function portTaken(host: string, port: number): Promise<string | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'EADDRINUSE' ? 'in use' : err.code === 'EACCES' ? 'not permitted' : (err.code ?? err.message));
    });
    probe.listen({ host, port }, () => probe.close(() => resolve(null)));
  });
}
