// A contract call with its pending state and error, held in the component
// (trust, passphrase, test and import are one-off operator actions; none of
// them belongs in the shared store).
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ChannelInput, ChannelOutput, InvokeChannel } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

export interface CallState<C extends InvokeChannel> {
  readonly pending: boolean;
  readonly error: string | null;
  readonly result: ChannelOutput<C> | null;
  run(input: ChannelInput<C>): Promise<ChannelOutput<C> | null>;
  reset(): void;
}

export function useCall<C extends InvokeChannel>(channel: C): CallState<C> {
  const { transport } = useServices();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ChannelOutput<C> | null>(null);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const run = useCallback(
    async (input: ChannelInput<C>): Promise<ChannelOutput<C> | null> => {
      setPending(true);
      setError(null);
      try {
        const out = await transport.invoke(channel, input);
        if (mounted.current) setResult(out);
        return out;
      } catch (err) {
        const e = toContractError(err);
        if (mounted.current) setError(`${e.code}: ${e.message}`);
        return null;
      } finally {
        if (mounted.current) setPending(false);
      }
    },
    [transport, channel],
  );
  const reset = useCallback(() => {
    setError(null);
    setResult(null);
  }, []);
  return { pending, error, result, run, reset };
}
