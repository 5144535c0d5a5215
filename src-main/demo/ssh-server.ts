// One demo host's SSH endpoint: an ssh2 Server on 127.0.0.1:0 with its own
// host key. Only user `ops` with the fleet's client key gets in; direct-tcpip
// reaches only the services' remotePorts on loopback (piped to the private
// simulator listeners); session exec runs the demo command interpreter.

import { timingSafeEqual } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { Connection, ParsedKey, ServerChannel } from 'ssh2';
import { toAppError, type Logger } from '../core/base/index.js';
import { collectorHostOf, runCommand, tokenize, type ExecHost } from './exec.js';
import { residentChannelIo, serveResident } from './collector-resident.js';
import { streamLogCommand, type LogSink } from './log-stream.js';
import { DemoLink } from './ssh-link.js';

const { Server } = ssh2;

export const DEMO_SSH_USER = 'ops';

export interface ForwardTarget {
  remotePort: number;
  /** Null while the service refuses connections (down or loading). */
  localPort(): number | null;
}

export interface DemoSshServerOptions {
  hostKey: string;
  clientKey: ParsedKey;
  logger: Logger;
  execHost: ExecHost;
  targets: ForwardTarget[];
}

function equalBytes(input: Buffer, allowed: Buffer): boolean {
  // Compare in constant time; a length mismatch still does a comparison.
  const same = input.length === allowed.length;
  return timingSafeEqual(input, same ? allowed : input) && same;
}

export class DemoSshServer {
  private readonly server: InstanceType<typeof Server>;
  /** The TCP listener clients reach the server through (ssh2's own listener is never bound): the link-cut knob. */
  private readonly link: DemoLink;
  private readonly clients = new Set<Connection>();
  private readonly sockets = new Set<Socket>();
  private closed = false;

  constructor(private readonly options: DemoSshServerOptions) {
    this.server = new Server({ hostKeys: [options.hostKey] }, (client) => this.onClient(client));
    this.server.on('error', (err: Error) => options.logger.warn('demo ssh server error', { error: err.message }));
    this.link = new DemoLink((socket) => this.server.injectSocket(socket));
  }

  listen(): Promise<number> {
    return this.link.listen();
  }

  get listening(): boolean {
    return this.link.listening;
  }

  get connectionCount(): number {
    return this.clients.size;
  }

  /** Fault knob: the network to this host is cut (connections reset, new ones never answered) or restored. */
  setLinkCut(on: boolean): void {
    if (on === this.link.isCut) return;
    this.options.logger.info(on ? 'link cut' : 'link restored');
    this.link.setCut(on);
  }

  get linkCut(): boolean {
    return this.link.isCut;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    for (const c of this.clients) c.end();
    await this.link.close();
  }

  private onClient(client: Connection): void {
    const log = this.options.logger;
    this.clients.add(client);
    // ssh2 writes each packet on its own (an exec's output, exit status, EOF and close are four writes); with
    // Nagle on, the second waits for the client's delayed ACK, about 40 ms per command, where an sshd's answer
    // leaves in one flush. A demo host answers as quickly as a real one.
    (client as Connection & { setNoDelay(on: boolean): Connection }).setNoDelay(true);
    client.on('close', () => this.clients.delete(client));
    client.on('error', (err) => log.debug('ssh client error', { error: err.message }));
    client.on('authentication', (ctx) => {
      const userOk = equalBytes(Buffer.from(ctx.username), Buffer.from(DEMO_SSH_USER));
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const allowed = this.options.clientKey;
      const keyOk =
        ctx.key.algo === allowed.type &&
        equalBytes(ctx.key.data, allowed.getPublicSSH()) &&
        (!ctx.signature || !ctx.blob || allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true);
      if (!userOk || !keyOk) {
        log.info('ssh authentication rejected', { user: ctx.username, method: ctx.method });
        return ctx.reject(['publickey']);
      }
      ctx.accept();
    });
    client.on('ready', () => {
      client.on('tcpip', (accept, reject, info) => {
        const destOk = info.destIP === '127.0.0.1' || info.destIP === 'localhost';
        const target = destOk ? this.options.targets.find((t) => t.remotePort === info.destPort) : undefined;
        const port = target?.localPort() ?? null;
        if (!target || port === null) {
          log.debug('direct-tcpip refused', { destIP: info.destIP, destPort: info.destPort });
          return reject();
        }
        const socket = connect(port, '127.0.0.1');
        this.sockets.add(socket);
        let channel: ServerChannel | undefined;
        socket.once('close', () => {
          this.sockets.delete(socket);
          channel?.end();
        });
        socket.on('error', () => {
          if (!channel) reject();
          else channel.destroy();
        });
        socket.once('connect', () => {
          channel = accept();
          if (!channel) {
            socket.destroy();
            return;
          }
          socket.pipe(channel).pipe(socket);
          channel.on('error', () => socket.destroy());
          channel.once('close', () => socket.destroy());
        });
      });
      client.on('session', (accept) => {
        const session = accept();
        session.on('pty', (_accept, reject) => reject?.());
        session.on('shell', (_accept, reject) => reject?.());
        session.on('env', (accept) => accept?.());
        session.once('exec', (acceptExec, _reject, info) => {
          const stream = acceptExec();
          this.exec(info.command, stream);
        });
      });
    });
  }

  private exec(command: string, stream: ServerChannel): void {
    const log = this.options.logger;
    log.debug('exec', { command });
    if (this.streamLogs(command, stream)) return;
    if (serveResident(command, residentChannelIo(stream), collectorHostOf(this.options.execHost))) return;
    runCommand(command, this.options.execHost)
      .catch((err: unknown) => ({ stdout: '', stderr: `demo host: ${toAppError(err).message}\n`, code: 1 }))
      .then((result) => {
        if (stream.destroyed) return;
        if (result.stdout) stream.write(result.stdout);
        if (result.stderr) stream.stderr.write(result.stderr);
        stream.exit(result.code);
        stream.end();
      })
      .catch(() => undefined);
  }

  /** A log command (wrapped or not) runs as a stream: lines as the service writes them, until the client's EOF or close. */
  private streamLogs(command: string, stream: ServerChannel): boolean {
    const logs = this.options.execHost.logs;
    if (!logs) return false;
    let argv: string[];
    try {
      argv = tokenize(command);
    } catch {
      return false;
    }
    const sink = orderedSink(stream);
    const running = streamLogCommand(argv, logs, sink, tokenize);
    if (!running) return false;
    // The wrapper's contract: stdin's EOF (or the channel going) stops the command.
    stream.once('end', () => running.stop());
    stream.once('close', () => running.stop());
    stream.on('error', () => running.stop());
    // ssh2 emits 'end' only once the readable side is consumed.
    stream.resume();
    return true;
  }
}

/** Bytes a log command may have written that the channel has not taken yet, before it is told to wait. */
const SINK_HIGH_WATER = 64 * 1024;

/**
 * The channel as a log command's output: stdout and stderr writes go out one
 * at a time, each after the one before it was taken, so lines keep the order
 * the service wrote them in across the two streams (ssh2 queues each stream on
 * its own); `write` says false past SINK_HIGH_WATER and onDrain fires once the
 * queue is empty again.
 */
function orderedSink(channel: ServerChannel): LogSink {
  const queue: { fd: 'stdout' | 'stderr'; text: string }[] = [];
  const drains: (() => void)[] = [];
  let queued = 0;
  let writing = false;
  let ended = false;
  let endCode: number | null = null;
  const finish = () => {
    if (endCode === null || channel.destroyed) return;
    channel.exit(endCode);
    channel.end();
  };
  const next = (): void => {
    const item = queue.shift();
    if (!item || channel.destroyed) {
      writing = false;
      queued = 0;
      finish();
      for (const d of drains) d();
      return;
    }
    writing = true;
    queued -= item.text.length;
    const target = item.fd === 'stdout' ? channel : channel.stderr;
    target.write(item.text, () => next());
  };
  return {
    write: (fd, text) => {
      if (ended || channel.destroyed) return true;
      queue.push({ fd, text });
      queued += text.length;
      if (!writing) next();
      return queued < SINK_HIGH_WATER;
    },
    onDrain: (fn) => drains.push(fn),
    end: (code) => {
      if (ended) return;
      ended = true;
      endCode = code;
      if (!writing) finish();
    },
  };
}
