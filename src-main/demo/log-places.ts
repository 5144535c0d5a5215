// Where a demo service's log can be read on its host, the way its restart
// command implies: a systemd unit's journal (`sudo systemctl restart <unit>`),
// or a compose service's container (`docker compose -f <file> restart <svc>`);
// every service also appends to a plain file (StandardOutput=append: or a
// compose volume), for `tail -F`.
import type { ServiceProfile } from './profiles.js';

export interface LogPlaces {
  /** `<name>.service`, or null when the service runs under compose. */
  unit: string | null;
  compose: { file: string; service: string; project: string } | null;
  /** The container's name (`<project>-<service>-1`, as compose names it), or null under systemd. */
  container: string | null;
  /** The plain file the process's output is appended to. */
  file: string;
}

export function logPlacesOf(service: Pick<ServiceProfile, 'id' | 'restartCommand'>): LogPlaces {
  const words = service.restartCommand.trim().split(/\s+/);
  const sys = words.indexOf('systemctl');
  if (sys >= 0 && words[sys + 1] === 'restart' && words[sys + 2]) {
    const name = words[sys + 2]!.replace(/\.service$/, '');
    return { unit: `${name}.service`, compose: null, container: null, file: `/var/log/${name.replace(/@/g, '-')}.log` };
  }
  const f = words.indexOf('-f');
  const r = words.lastIndexOf('restart');
  if (words.includes('compose') && r >= 0 && words[r + 1]) {
    const file = f >= 0 && words[f + 1] ? words[f + 1]! : '/srv/compose.yaml';
    const project = file.split('/').slice(-2, -1)[0] ?? 'demo';
    const svc = words[r + 1]!;
    return { unit: null, compose: { file, service: svc, project }, container: `${project}-${svc}-1`, file: `${file.slice(0, file.lastIndexOf('/'))}/logs/${svc}.log` };
  }
  return { unit: `${service.id}.service`, compose: null, container: null, file: `/var/log/${service.id}.log` };
}
