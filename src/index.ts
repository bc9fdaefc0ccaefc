/**
 * parley's public API. Everything exported here is stable and documented; internals stay behind.
 */

export * from "./messaging/approval.js";
export * from "./messaging/attachments.js";
export * from "./messaging/audit.js";
// Layer 1: transports and capabilities.
export * from "./messaging/capabilities.js";
export * from "./messaging/clock.js";
export * from "./messaging/conversation.js";
export * from "./messaging/dispatch.js";
export * from "./messaging/display-safety.js";
export * from "./messaging/driver.js";
export * from "./messaging/errors.js";
// Layer 2: the turn core.
export * from "./messaging/events.js";
// Layer 3 and the shared dispatch machinery.
export * from "./messaging/link.js";
export * from "./messaging/logger.js";
export * from "./messaging/markup.js";
export * from "./messaging/mid-turn.js";
export * from "./messaging/options.js";
export * from "./messaging/outbound-files.js";
export * from "./messaging/queue-receipt.js";
export * from "./messaging/raster.js";
export * from "./messaging/recording-renderer.js";
// Layer 2b: renderers and their shared helpers.
export * from "./messaging/renderer.js";
export * from "./messaging/security/index.js";
export * from "./messaging/semaphore.js";
export * from "./messaging/session-manager.js";
export * from "./messaging/split.js";
export * from "./messaging/status-reactions.js";
export * from "./messaging/steering.js";
export * from "./messaging/stop.js";
export * from "./messaging/streaming-splitter.js";
export * from "./messaging/tables.js";
export * from "./messaging/transport.js";
// Providers.
export * from "./providers/index.js";
export type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "./providers/scripted.js";
export { ScriptedProvider } from "./providers/scripted.js";
