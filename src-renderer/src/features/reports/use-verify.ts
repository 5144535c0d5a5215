// One "Verify" button's state: reports.verify on an export folder, its
// findings, or the coded error it failed with.
import { useCallback, useState } from 'react';
import type { ContractError, ReportVerifyResult } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

export type VerifyState = { status: 'idle' } | { status: 'running' } | { status: 'done'; result: ReportVerifyResult } | { status: 'error'; error: ContractError };

export function useVerify(): { state: VerifyState; verify(dir: string): void; reset(): void } {
  const { transport } = useServices();
  const [state, setState] = useState<VerifyState>({ status: 'idle' });
  const verify = useCallback(
    (dir: string) => {
      setState({ status: 'running' });
      transport.invoke('reports.verify', { dir }).then(
        (result) => setState({ status: 'done', result }),
        (err: unknown) => setState({ status: 'error', error: toContractError(err) }),
      );
    },
    [transport],
  );
  const reset = useCallback(() => setState({ status: 'idle' }), []);
  return { state, verify, reset };
}
