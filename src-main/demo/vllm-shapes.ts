// vLLM's `/v1/models` answer for the demo's served model.
import type { VllmServiceProfile } from './profiles.js';
import { hashString } from './text-gen.js';

export function vllmModelList(profile: VllmServiceProfile, processStartMs: number) {
  const created = Math.floor(processStartMs / 1000);
  return {
    object: 'list',
    data: [
      {
        id: profile.servedModelName,
        object: 'model',
        created,
        owned_by: 'vllm',
        root: profile.root,
        parent: null,
        max_model_len: profile.maxModelLen,
        permission: [
          {
            id: `modelperm-${hashString(profile.root).toString(16)}${created.toString(16)}`,
            object: 'model_permission',
            created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  };
}
