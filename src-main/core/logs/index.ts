// Service logs over SSH: where a service's lines come from (journal, compose,
// docker, a file, a command), the last N of them, and follows shared per
// service with bounded queues, resumed after a lost link; lines masked and
// their known failures marked before they leave main. Nothing is stored.
export { LogsErrorCode } from './errors.js';
export { LogsService, type LogsHosts, type LogsServiceOptions, type LogFollow, type TailOptions, type FollowOptions } from './logs-service.js';
export { LogFollowEvents, type LogFollowEventsOptions } from './follow-events.js';
export { logsChannels } from './channels.js';
export { classifyLine } from './classify.js';
export { LogWatch, type LogFailureFound, type LogWatchOptions, type LogWatchRound } from './log-watch.js';
export { logSourceOf, logCommand, hasTimestamps, type LogSource, type LogQuery, type ResumePoint } from './sources.js';
export { LineSplitter, decodeLine, maskLine, DEFAULT_MAX_LINE_BYTES } from './lines.js';
export { FollowerQueue, lineFilter } from './follower.js';
