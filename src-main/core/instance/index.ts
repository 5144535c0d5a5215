// Where a console keeps its data and how one console process is found by
// another command: the default data folder and the ready file.
export { InstanceErrorCode } from './errors.js';
export { defaultDataDir, prepareDataDir } from './data-dir.js';
export {
  READY_FILE_NAME,
  ReadyInfoSchema,
  findRunningConsole,
  isProcessAlive,
  readyFilePath,
  removeReadyFile,
  writeReadyFile,
  type ReadyInfo,
} from './ready-file.js';
export { VERSION } from './version.js';
export { recordConsoleStarted, recordConsoleStopped, type ConsoleStart } from './lifetime.js';
