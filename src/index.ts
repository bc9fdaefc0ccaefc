/**
 * parley's public API, listed by name: what a channel author, an embedder or a test needs. Every
 * name here is documented in docs/api.md, and test/api.test.ts fails when the two lists differ.
 * Anything not listed is internal and may change without notice.
 */

// ── Base: clocks, logs, errors ───────────────────────────────────────────────────────────────────
export type { Clock, Timers } from "./messaging/base/clock.js";
export { realClock } from "./messaging/base/clock.js";
export type { ParleyErrorCode } from "./messaging/base/errors.js";
export { ParleyError } from "./messaging/base/errors.js";
export type { Logger } from "./messaging/base/logger.js";
export { MemoryLogger, silentLogger } from "./messaging/base/logger.js";
export type { BufferedRendererOptions } from "./messaging/channel/buffered-renderer.js";
export { BufferedRenderer } from "./messaging/channel/buffered-renderer.js";
export type { TransportCapabilities } from "./messaging/channel/capabilities.js";
export {
  capabilitiesToJson,
  DEFAULT_CAPABILITIES,
  defineCapabilities,
  deliveryConfirmed,
} from "./messaging/channel/capabilities.js";
export type { CommandCall, CommandHandler } from "./messaging/channel/command-handlers.js";
export { SHARED_HANDLERS } from "./messaging/channel/command-handlers.js";
export type {
  CommandGrammar,
  CommandKit,
  CommandSpec,
  CommandTable,
  ParsedCommand,
} from "./messaging/channel/command-kit.js";
export { commandTable, defineCommands, SHARED_COMMANDS } from "./messaging/channel/command-kit.js";
// ── Building a channel: the contract, the hub and its surface ──────────────────────────────────
export type {
  ChannelCliCommand,
  ChannelContext,
  ChannelDefaults,
  ChannelEntry,
  ChannelModule,
  ChannelProbe,
  ChannelSettings,
  Env,
  GrantControl,
  RunningChannel,
} from "./messaging/channel/contract.js";
export { defineChannel, probeChannel, secretOf } from "./messaging/channel/contract.js";
export type { ChannelList, HubOptions } from "./messaging/channel/hub.js";
export { ConversationHub } from "./messaging/channel/hub.js";
export type { InboundDrop, InboundDropReason, InboundDrops } from "./messaging/channel/inbound-drops.js";
export { PhaseReactionLadder } from "./messaging/channel/phase-ladder.js";
export {
  approvalOutcomeLabel,
  EditThrottle,
  noAnswerNotice,
  SerialQueue,
  steerChip,
  turnStatusLine,
  typedReplyHint,
} from "./messaging/channel/render-kit.js";
export { apiOrigin, idList, ownerOf, queueModeSetting } from "./messaging/channel/settings.js";
export type {
  ChannelSurface,
  Conversation,
  Handled,
  IncomingMessage,
  OutboundFilePolicy,
  PickerSurface,
  TurnStart,
} from "./messaging/channel/surface.js";
export type {
  InboundAttachment,
  InboundMessage,
  ReceiveOutcome,
  SendOptions,
  TransportOptions,
} from "./messaging/channel/transport.js";
export { inboundMessage, MessagingTransport } from "./messaging/channel/transport.js";
export { boundedDownload } from "./messaging/files/bounded-download.js";
// ── Files both ways ──────────────────────────────────────────────────────────────────────────────
export type { Attachment, IngestLimits } from "./messaging/files/ingest.js";
export { bytesAttachment, DEFAULT_INGEST_LIMITS } from "./messaging/files/ingest.js";
export type { OutboundFile } from "./messaging/files/outbound-files.js";
export { extractLocalRefs, hideLocalRefs } from "./messaging/files/outbound-files.js";
export type { AuditRecord, AuditSink } from "./messaging/security/audit.js";
export { JsonlAuditSink, MemoryAuditSink } from "./messaging/security/audit.js";
export { redactForDisplay } from "./messaging/security/display-safety.js";

// ── Security: redaction of what is displayed, the audit trail ──────────────────────────────────
export { REDACTION_MARKER, redactAll, StreamRedactor } from "./messaging/security/index.js";
export { SessionManager } from "./messaging/session/session-manager.js";
// ── Text, shared by every renderer (code points, never UTF-16 units) ───────────────────────────
export { clip, oneLine } from "./messaging/text/clip.js";
export { applyOptionsCap, displaySafeFor, splitOptionsTrailer } from "./messaging/text/options.js";
export { splitMarkdownSafe } from "./messaging/text/split.js";
export { StreamingSplitter } from "./messaging/text/streaming-splitter.js";
export { renderTables } from "./messaging/text/tables/index.js";
export type { ApprovalMode, TurnPolicy } from "./messaging/turn/driver.js";
export { TurnDriver } from "./messaging/turn/driver.js";
export type {
  PipelineProvider,
  TurnPipelineDeps,
  TurnRequest,
  TurnResult,
} from "./messaging/turn/pipeline.js";
export { runTurnPipeline } from "./messaging/turn/pipeline.js";
export type { PermissionVerdict, PromptContent, ProviderEvent } from "./messaging/turn/provider-events.js";
export { RecordingRenderer } from "./messaging/turn/recording-renderer.js";
// ── Rendering a turn ────────────────────────────────────────────────────────────────────────────
export type { OutputEvent, PromptOption } from "./messaging/turn/renderer.js";
export { Renderer, SilentRenderer } from "./messaging/turn/renderer.js";

// ── Agents ──────────────────────────────────────────────────────────────────────────────────────
export type { AgentPoolOptions, AgentProbeResult, Provider } from "./providers/index.js";
export {
  AcpProvider,
  AGENT_POOL_DEFAULTS,
  AgentPool,
  demoAgentCommand,
  probeAgent,
} from "./providers/index.js";
export type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "./providers/scripted.js";
export { ScriptedProvider } from "./providers/scripted.js";
