// The network between the console and one demo host: the TCP listener the
// host's SSH server is reached through, with a fault knob that cuts it. While
// cut, the connections up are reset and new ones are accepted but never
// answered (packets into a black hole: the client's handshake times out), as
// a dropped link or a dead route looks from the console's side; restored,
// the held ones are dropped and new connections reach SSH again.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export class DemoLink {
  private readonly server: Server;
  private readonly live = new Set<Socket>();
  private readonly held = new Set<Socket>();
  private cut = false;

  /** `onSocket` gets each connection made while the link is up (the SSH server's injectSocket). */
  constructor(onSocket: (socket: Socket) => void) {
    this.server = createServer((socket) => {
      const set = this.cut ? this.held : this.live;
      set.add(socket);
      socket.once('close', () => set.delete(socket));
      socket.on('error', () => undefined);
      if (this.cut) socket.pause();
      else onSocket(socket);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  get listening(): boolean {
    return this.server.listening;
  }

  get isCut(): boolean {
    return this.cut;
  }

  /** Cuts the link (on) or restores it; idempotent. */
  setCut(on: boolean): void {
    if (on === this.cut) return;
    this.cut = on;
    const drop = on ? this.live : this.held;
    for (const s of [...drop]) s.resetAndDestroy();
    drop.clear();
  }

  close(): Promise<void> {
    for (const s of [...this.live, ...this.held]) s.destroy();
    this.live.clear();
    this.held.clear();
    return new Promise((resolve) => (this.server.listening ? this.server.close(() => resolve()) : resolve()));
  }
}
