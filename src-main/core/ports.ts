// What the core needs from whoever hosts it (the Electron shell or the headless
// web bridge). Core never asks for Electron by name; it is handed these.

export interface Paths {
  /** Folder holding the database, the ready file and the console's own files. */
  dataDir: string;
  /** The config file in use (may not exist yet). */
  configFile: string;
}

/** Stores small secrets (passphrases, API keys, tokens) outside the database. */
export interface SecretStore {
  readonly kind: string;
  /** False when secrets cannot be kept across sessions (then they are asked each session). */
  readonly persistent: boolean;
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** Names only, never values. */
  list(): Promise<string[]>;
}

export interface NotificationRequest {
  title: string;
  body: string;
  /** Where a click should lead, e.g. "fleet" or "hosts/l20-poc". */
  route?: string;
}

export interface Notifier {
  notify(request: NotificationRequest): void;
}

export interface PdfPrinter {
  printHtmlToPdf(html: string): Promise<Buffer>;
}

/**
 * A native "open file" dialog (desktop shell). The chosen path goes straight to main: a path never comes
 * from the renderer. Headless there is none; the browser uploads the file's content instead.
 */
export interface FilePicker {
  chooseFile(options: { title: string; defaultPath: string; signal?: AbortSignal }): Promise<string | null>;
}
