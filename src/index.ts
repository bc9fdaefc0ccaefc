/**
 * parley's public API. Everything exported here is stable and documented; internals stay behind.
 */

export * from "./messaging/approval/approvals.js";
export * from "./messaging/base/clock.js";
export * from "./messaging/base/errors.js";
export * from "./messaging/base/logger.js";
export * from "./messaging/base/mutex.js";
// Layer 1: transports and capabilities.
export * from "./messaging/channel/capabilities.js";
export * from "./messaging/channel/phase-ladder.js";
export * from "./messaging/channel/transport.js";
export * from "./messaging/files/image-sniff.js";
export * from "./messaging/files/ingest.js";
export * from "./messaging/files/outbound-files.js";
export * from "./messaging/queue/mid-turn-router.js";
export * from "./messaging/queue/receipt.js";
export * from "./messaging/queue/stop.js";
export * from "./messaging/security/audit.js";
export * from "./messaging/security/display-safety.js";
export * from "./messaging/security/index.js";
export * from "./messaging/session/generations.js";
// Layer 3 and the shared dispatch machinery.
export * from "./messaging/session/keys.js";
export * from "./messaging/session/session-manager.js";
export * from "./messaging/text/markup.js";
export * from "./messaging/text/options.js";
export * from "./messaging/text/split.js";
export * from "./messaging/text/streaming-splitter.js";
export * from "./messaging/text/tables/index.js";
export * from "./messaging/turn/driver.js";
export * from "./messaging/turn/frames.js";
export * from "./messaging/turn/pipeline.js";
// Layer 2: the turn core.
export * from "./messaging/turn/provider-events.js";
export * from "./messaging/turn/recording-renderer.js";
// Layer 2b: renderers and their shared helpers.
export * from "./messaging/turn/renderer.js";
// Providers.
export * from "./providers/index.js";
export type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "./providers/scripted.js";
export { ScriptedProvider } from "./providers/scripted.js";
