// The name of one model-service endpoint: `label/serviceId`, the key the
// proxy's registry, lifecycle targets, bench runs and audit rows use. Branded,
// so a string built by hand (or a host label alone) is a type error where an
// endpoint is meant; made by one function, taken apart by one.

declare const upstreamKeyBrand: unique symbol;

/** `label/serviceId` of one service endpoint. */
export type UpstreamKey = string & { readonly [upstreamKeyBrand]: true };

/** The key of `serviceId` on host `label` (config holds both to grammars without `/`). */
export function upstreamKey(label: string, serviceId: string): UpstreamKey {
  return `${label}/${serviceId}` as UpstreamKey;
}

/** The host label and service id of a key; null for text that is not one (no `/`, or an empty half). */
export function splitUpstreamKey(key: string): { label: string; serviceId: string } | null {
  const slash = key.lastIndexOf('/');
  if (slash <= 0 || slash === key.length - 1) return null;
  return { label: key.slice(0, slash), serviceId: key.slice(slash + 1) };
}
