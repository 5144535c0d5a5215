// Writes one export whose PDF printer never answers, so the process sits with
// a half-written staging folder until the test kills it (SIGKILL).
// Usage: node --import tsx export-kill-worker.ts PARENT_DIR NAME
import { writeExport } from '../../../src-main/core/report/exporter.js';
import { sampleEvidence } from '../../fixtures/report/evidence-sample.js';

const [parentDir, name] = process.argv.slice(2) as [string, string];
void writeExport({
  evidence: sampleEvidence(),
  formats: ['md', 'html', 'pdf'],
  parentDir,
  name,
  signer: null,
  principal: 'test',
  pdf: {
    printHtmlToPdf: () => {
      process.stdout.write('PRINTING\n');
      return new Promise<Buffer>(() => undefined);
    },
  },
  now: () => Date.now(),
});
