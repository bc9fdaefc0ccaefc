/**
 * The channel registry contract (the dynamic-import convention): each channel registers a
 * dependency-free configured() probe and an async load(). A channel module, and with it its SDK, is
 * imported only when configured; one channel failing to load or start never stops the others.
 */

import type { Logger } from "../messaging/base/logger.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { SessionManager } from "../messaging/session/session-manager.js";
import type { SessionStore } from "../messaging/session/session-store.js";
import type { PipelineDeps, PipelineProvider } from "../messaging/turn/pipeline.js";
import type { Env, ParleyConfig } from "./config.js";

export interface ChannelProbe {
  status: "configured" | "incomplete" | "disabled";
  /** The exact settings still missing (names only, never values). */
  missing?: string[];
  note?: string;
}

/** The one process-wide auto-approve grant, as a channel sees it. */
export interface GrantControl {
  isActive(): boolean;
  /** Handle "/yolo <arg>" from `source` (the channel) on behalf of `caller`; returns the reply text. */
  command(arg: string, who?: { source: string; caller: string }): string;
}

export interface GatewayContext {
  config: ParleyConfig;
  env: Env;
  home: string;
  logger: Logger;
  audit: AuditSink;
  sessions: SessionManager<PipelineProvider>;
  pipeline: Omit<PipelineDeps, "sessions">;
  grant: GrantControl;
  /** The durable session store (absent in tests that need none). */
  store?: SessionStore;
  /** One line for the operator on stdout (the web chat URL). */
  announce: (line: string) => void;
}

export interface RunningChannel {
  name: string;
  /** Stop intake, settle in-flight turns, then close network sessions. */
  stop(): Promise<void>;
}

export interface ChannelModule {
  start(ctx: GatewayContext): Promise<RunningChannel>;
}

export interface ChannelEntry {
  name: string;
  /** Reads config and env only; must not import the channel's SDK. */
  configured(config: ParleyConfig, env: Env): ChannelProbe;
  load(): Promise<ChannelModule>;
  docs: string;
}
