// What ssh asks the console while one connect attempt logs in, through the
// helper: host keys (the console's verdict, known_hosts then the operator's
// confirmations), key passphrases (from what the operator typed; a second ask
// for the same key means it was wrong), and keyboard-interactive questions (a
// one-time code), which wait for the operator while ssh waits. What it learnt
// (the refused key, the credential problem) becomes the attempt's error.
//
// A host can ask anything through keyboard-interactive, in any words, and ssh
// hands its questions to the same askpass program as its own. So a passphrase
// is given only to ssh's own question naming the host's identityFile, matched
// whole; every other question is the operator's to answer, shown as asked.
import { AppError, escapeControls, type Clock, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { hostKeyRefusal, judgeHostKey, loadKnownHosts } from './host-key-check.js';
import type { HelperAnswer, HelperQuestion } from './openssh-helper.js';
import type { PassphraseProvider } from './passphrases.js';
import type { HostKeyProblem } from './session.js';
import type { HostKeyTrustStore } from './trust-store.js';

/** How long a keyboard-interactive question waits for the operator (sshd's LoginGraceTime is 120 s by default). */
export const PROMPT_WAIT_MS = 110_000;

export interface LoginContext {
  label: string;
  /** The identityFile of the host (passphrases are kept under that path). */
  identityFile: string | null;
  clock: Clock;
  logger: Logger;
  promptWaitMs: number;
  knownHostsFile(): string;
  trustStore(): HostKeyTrustStore;
  passphrases(): PassphraseProvider;
  /** known_hosts name of the target (as ssh looks it up): anything else asked about is a jump hop. */
  targetEndpoint(): string;
  onHostFingerprint(fingerprint: string): void;
}

export class LoginQuestions {
  /** The first host key refused, with its error: the attempt's cause. */
  problem: HostKeyProblem | null = null;
  hostKeyError: AppError | null = null;
  credentialError: AppError | null = null;
  /** When the operator last answered (the attempt's deadline counts from then); 0: never. */
  answeredAt = 0;
  private readonly prompts = new Map<string, number>();
  private prompt: { text: string; expiresAt: number; settle(answer: HelperAnswer): void } | null = null;
  private closed = false;
  /** The operator said no: ssh's later asks in this attempt (it retries keyboard-interactive) get no too. */
  private declined = false;

  constructor(private readonly ctx: LoginContext) {}

  get pendingPrompt(): { text: string; expiresAt: number } | null {
    return this.prompt ? { text: this.prompt.text, expiresAt: this.prompt.expiresAt } : null;
  }

  answerPrompt(answer: string): boolean {
    const p = this.prompt;
    if (!p) return false;
    p.settle({ secret: answer });
    return true;
  }

  /** The operator declined to answer: ssh is told no, and the attempt fails saying so. */
  cancelPrompt(): boolean {
    const p = this.prompt;
    if (!p) return false;
    this.declined = true;
    this.credentialError = new AppError(SshErrorCode.AUTH_FAILED, `${this.ctx.label}: the host asked "${p.text}" and the operator declined to answer`, { details: { prompt: p.text } });
    p.settle({ cancel: 'declined' });
    return true;
  }

  /** The attempt is over: a question still open is cancelled, later ones are refused. */
  close(): void {
    this.closed = true;
    this.prompt?.settle({ cancel: 'the attempt ended' });
  }

  answer(q: HelperQuestion): Promise<HelperAnswer> {
    if (this.closed) return Promise.resolve({ cancel: 'superseded' });
    if (q.kind === 'hostkey') return this.answerHostKey(q);
    const asked = classifyPrompt(q.prompt, this.ctx.identityFile ? [this.ctx.identityFile] : []);
    switch (asked.kind) {
      case 'presence':
        return Promise.resolve({ lines: [] });
      case 'passphrase':
        return Promise.resolve(this.answerPassphrase(asked.keyFile));
      case 'other-key':
        return Promise.resolve(this.refuseOtherKey(asked.keyFile));
      case 'operator':
        return this.askOperator(asked.text);
    }
  }

  private answerPassphrase(keyFile: string): HelperAnswer {
    const { label } = this.ctx;
    const seen = (this.prompts.get(keyFile) ?? 0) + 1;
    this.prompts.set(keyFile, seen);
    const passphrases = this.ctx.passphrases();
    const given = passphrases.get(keyFile);
    if (seen > 1 && given !== undefined) {
      passphrases.forget(keyFile);
      this.credentialError = new AppError(SshErrorCode.PASSPHRASE_INCORRECT, `${label}: the passphrase for ${keyFile} is incorrect`, { details: { keyFile } });
      return { cancel: 'incorrect passphrase' };
    }
    if (given === undefined) {
      this.credentialError = new AppError(SshErrorCode.PASSPHRASE_REQUIRED, `${label}: ${keyFile} is encrypted; enter its passphrase in the console to connect`, { details: { keyFile } });
      return { cancel: 'no passphrase given' };
    }
    return { secret: given };
  }

  /** ssh wants a key the inventory does not name (an OpenSSH config's): the console holds no passphrase for it and gives none. */
  private refuseOtherKey(keyFile: string): HelperAnswer {
    const { label, identityFile } = this.ctx;
    // Not PASSPHRASE_REQUIRED: that has the console ask for the identityFile's passphrase, another key's.
    this.credentialError = new AppError(
      SshErrorCode.AUTH_FAILED,
      `${label}: ssh asked for the passphrase of ${keyFile}, which is not the host's identityFile${identityFile ? ` (${identityFile})` : ''}; ` +
        `the console gives a passphrase only for that file: set identityFile: ${keyFile} on the host, or load the key into ssh-agent`,
      { details: { keyFile, identityFile } },
    );
    return { cancel: 'not the configured key' };
  }

  /** Keyboard-interactive: ssh waits while the operator answers in the console (or the question expires). */
  private askOperator(text: string): Promise<HelperAnswer> {
    const { clock, label } = this.ctx;
    if (this.declined) return Promise.resolve({ cancel: 'declined' });
    this.prompt?.settle({ cancel: 'replaced' });
    return new Promise<HelperAnswer>((resolve) => {
      const waitMs = this.ctx.promptWaitMs;
      const timer = clock.setTimeout(() => {
        this.credentialError = new AppError(SshErrorCode.AUTH_FAILED, `${label}: the host asked "${text}" and nobody answered within ${Math.round(waitMs / 1000)} s`, {
          details: { prompt: text },
        });
        entry.settle({ cancel: 'expired' });
      }, waitMs);
      const entry = {
        text,
        expiresAt: clock.now() + waitMs,
        settle: (answer: HelperAnswer) => {
          if (this.prompt === entry) this.prompt = null;
          void timer.dispose();
          // The time the operator took is not the host's.
          this.answeredAt = clock.now();
          resolve(answer);
        },
      };
      this.prompt = entry;
      this.ctx.logger.info('host prompt', { prompt: text });
    });
  }

  private async answerHostKey(q: Extract<HelperQuestion, { kind: 'hostkey' }>): Promise<HelperAnswer> {
    // Certificates are ssh's to check against known_hosts' @cert-authority lines; if none signs it, ssh asks again with the plain key.
    if (/-cert-v0\d@openssh\.com$/.test(q.keyType)) return { lines: [] };
    const m = /^\[(.+)\]:(\d+)$/.exec(q.name);
    const host = m ? m[1]! : q.name;
    const port = m ? Number(m[2]) : 22;
    const role: 'host' | 'jump' = q.name.toLowerCase() === this.ctx.targetEndpoint().toLowerCase() ? 'host' : 'jump';
    const knownHosts = await loadKnownHosts(this.ctx.knownHostsFile());
    const verdict = judgeHostKey(knownHosts, this.ctx.trustStore(), host, port, Buffer.from(q.key, 'base64'));
    if (role === 'host') this.ctx.onHostFingerprint(verdict.fingerprint);
    if (verdict.status === 'trusted') return { lines: [`${q.name} ${q.keyType} ${q.key}`] };
    const { problem, error } = hostKeyRefusal(verdict, role, q.name, `${role === 'jump' ? 'jump host ' : ''}${host}:${port}`);
    // The first refusal is the cause; later hops were never reached.
    if (!this.problem) {
      this.problem = problem;
      this.hostKeyError = error;
    }
    return { lines: [] };
  }
}

/** What an askpass prompt is, and so who may answer it. */
export type AskpassPrompt =
  | { kind: 'passphrase'; keyFile: string }
  | { kind: 'other-key'; keyFile: string }
  | { kind: 'presence' }
  | { kind: 'operator'; text: string };

/** ssh's own question for a key's passphrase (sshconnect2.c); it keeps the first 100 bytes of the path. */
const KEY_PROMPT = /^Enter passphrase for key '([\s\S]*)':$/;
/** ssh asking for a touch of a FIDO key: shown only, no answer wanted. */
const PRESENCE_PROMPT = /^Confirm user presence for key [\w@.-]+ (?:SHA256|MD5):[\w+/=:]+$/;
const PROMPT_SHOWN_CHARS = 200;

function sshKeyName(keyFile: string): string {
  return Buffer.from(keyFile, 'utf8').subarray(0, 100).toString('utf8');
}

/**
 * Sorts a prompt by who may answer it. Only ssh's own passphrase question, whole, for a key in `keyFiles`
 * gets a stored passphrase. Since OpenSSH 8.4 (the transport needs 8.5) a host's keyboard-interactive
 * question reaches askpass as `(user@host) <the host's words>`, so it never matches a pattern anchored at
 * the start, whatever words the host chose: it goes to the operator, as the host asked it.
 */
export function classifyPrompt(prompt: string, keyFiles: readonly string[]): AskpassPrompt {
  const whole = prompt.replace(/\s+$/, '');
  if (PRESENCE_PROMPT.test(whole)) return { kind: 'presence' };
  const named = KEY_PROMPT.exec(whole)?.[1];
  if (named !== undefined) {
    const keyFile = keyFiles.find((k) => sshKeyName(k) === named);
    return keyFile !== undefined ? { kind: 'passphrase', keyFile } : { kind: 'other-key', keyFile: escapeControls(named) };
  }
  return { kind: 'operator', text: escapeControls(whole.trim()).slice(0, PROMPT_SHOWN_CHARS) };
}
