/**
 * ProviderEvent: what an agent provider yields during one turn. Modelled on ACP `session/update`
 * notifications plus the permission request, so an ACP provider maps almost one to one and a
 * scripted provider can replay recorded turns. Layer: messaging (leaf, no imports).
 */

/** ACP tool kinds; anything else an agent sends is carried as "other". */
export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "switch_mode"
  | "other";

/** One option offered by a permission request; chosen by kind, never by id. */
export interface PermissionOption {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
}

export interface TextChunkEvent {
  type: "text";
  text: string;
}
export interface ThinkingChunkEvent {
  type: "thinking";
  text: string;
}
export interface ToolCallEvent {
  type: "tool_call";
  toolCallId: string;
  title: string;
  kind: ToolKind | string;
  /** Model-authored purpose line, when the agent supplies one. */
  purpose?: string;
  /** Trusted `_meta` identity (MCP server and tool) for directive consumption. */
  meta?: Record<string, unknown>;
}
export interface ToolResultEvent {
  type: "tool_result";
  toolCallId: string;
  status?: "pending" | "in_progress" | "completed" | "failed";
  meta?: Record<string, unknown>;
  /** True on the last frame of this tool call's results. */
  final?: boolean;
}
export interface PermissionRequestEvent {
  type: "permission_request";
  requestId: string;
  toolCallId: string;
  title: string;
  kind: ToolKind | string;
  options: PermissionOption[];
}
export interface CompactionStatusEvent {
  type: "compaction";
  /** 0..100, or undefined when the agent did not report usage. */
  contextUsagePct?: number;
  summary?: string;
}
export interface SteerConsumedEvent {
  type: "steer_consumed";
  id: string;
  summary: string;
}
export interface CompleteEvent {
  type: "complete";
  stopReason: string;
}
export interface SubagentActivityEvent {
  type: "subagent_activity";
  toolCallId?: string;
  text?: string;
}
export interface UsageEvent {
  type: "usage";
  used: number;
  size: number;
}
export interface PlanEvent {
  type: "plan";
  entries: { content: string; status: string; priority?: string }[];
}
export interface AvailableCommandsEvent {
  type: "available_commands";
  commands: { name: string; description: string }[];
}

export type ProviderEvent =
  | TextChunkEvent
  | ThinkingChunkEvent
  | ToolCallEvent
  | ToolResultEvent
  | PermissionRequestEvent
  | CompactionStatusEvent
  | SteerConsumedEvent
  | CompleteEvent
  | SubagentActivityEvent
  | UsageEvent
  | PlanEvent
  | AvailableCommandsEvent;

export type ProviderEventType = ProviderEvent["type"];

/** The driver's answer to a permission request. */
export type PermissionVerdict = "approve" | "approve_always" | "deny" | "cancelled";

/** A prompt content block (the ACP ContentBlock subset parley sends). */
export type PromptContent =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; data: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string };
