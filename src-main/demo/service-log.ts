// What a demo service has written: one bounded ring of log entries per
// service, in the order the process wrote them, each stamped with the demo
// clock (microseconds, strictly increasing, as journald's realtime field is).
// The host's log commands (journalctl, docker logs, tail) read it; follows
// subscribe to what is appended.
import { Emitter, type Clock, type Disposable } from '../core/base/index.js';

export interface LogEntryRecord {
  /** Sequence number in this service's log (journald's `i=` of the cursor). */
  seq: number;
  /** Demo-clock microseconds since the epoch. */
  tsUs: number;
  text: string;
  /** Where the process wrote it: python logging and llama.cpp write stderr, uvicorn's access log stdout. */
  stream: 'stdout' | 'stderr';
  /** Who wrote it: the service's process, or systemd about the unit. */
  writer: 'service' | 'systemd';
  pid: number;
  /** syslog priority: 3 error, 4 warning, 6 info. */
  priority: 3 | 4 | 6;
}

export type LogLineSpec = Pick<LogEntryRecord, 'text'> & Partial<Pick<LogEntryRecord, 'stream' | 'writer' | 'priority'>> & { pid?: number };

/** Entries a service keeps (older ones are gone, as a rotated log's are). */
export const SERVICE_LOG_ENTRIES = 20_000;

export class ServiceLog implements Disposable {
  private readonly ring: LogEntryRecord[] = [];
  private lastUs = 0;
  private nextSeq = 1;
  readonly onDidAppend = new Emitter<LogEntryRecord>();

  constructor(
    private readonly clock: Clock,
    private readonly capacity = SERVICE_LOG_ENTRIES,
  ) {}

  /** Appends lines at `atMs` (default now); stamps never go backwards. */
  append(lines: readonly LogLineSpec[], defaultPid: number, atMs?: number): void {
    for (const l of lines) {
      const us = Math.max(Math.floor((atMs ?? this.clock.now()) * 1000), this.lastUs + 1);
      this.lastUs = us;
      const entry: LogEntryRecord = {
        seq: this.nextSeq++,
        tsUs: us,
        text: l.text,
        stream: l.stream ?? 'stderr',
        writer: l.writer ?? 'service',
        pid: l.pid ?? defaultPid,
        priority: l.priority ?? 6,
      };
      this.ring.push(entry);
      if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
      this.onDidAppend.fire(entry);
    }
  }

  /** Every entry still held, oldest first. */
  entries(): readonly LogEntryRecord[] {
    return this.ring;
  }

  dispose(): void {
    this.onDidAppend.dispose();
  }
}
