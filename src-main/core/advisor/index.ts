// The parallelism advisor: recommendations, never actions. It judges each upstream's
// queue waits, slot use and GPU headroom over a window and proposes caps changes; a
// person applies one (the proxy's audited caps change) or rejects it (kept across restarts).
export { AdvisorService, recommendationId, roundSampleOf, type AdvisorServiceDeps, type AdvisorProxy, type AdvisorFleet, type AdvisorFleetState } from './service.js';
export { DEFAULT_ADVISOR_SETTINGS, judge, type AdvisorSettings, type Judgement, type Proposal } from './rules.js';
export { AdvisorWindow, MAX_ANSWERS, MAX_ROUNDS, type RoundSample, type WindowFigures } from './window.js';
export { REJECTIONS_SETTING, MATERIAL_CHANGE } from './rejections.js';
export { AdvisorErrorCode } from './errors.js';
export { advisorChannels } from './channels.js';
