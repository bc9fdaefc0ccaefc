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

/**
 * The agent changed a tool call it announced (ACP tool_call_update): only the fields it changed.
 * Real agents announce "Terminal" and then retitle it with the command ("ls -la").
 */
export interface ToolCallUpdateEvent {
  type: "tool_call_update";
  toolCallId: string;
  title?: string;
  kind?: ToolKind | string;
  status?: "pending" | "in_progress" | "completed" | "failed";
}
/**
 * Every agent slot is busy mid-turn: this conversation waits in line for a free agent (1 = next).
 * Emitted when the wait begins and when the place changes; the answer's own events follow.
 */
export interface AgentWaitEvent {
  type: "agent_wait";
  position: number;
}
/** Why a conversation's agent session had been closed before this turn. */
export type SessionResumeCause = "idle" | "capacity" | "agent_exited" | "post_cancel" | "replaced";
/**
 * The conversation's agent session had been closed (idle, crash, a failed turn, a restart) and was
 * reopened for this turn: "restored" = session/load brought the earlier turns back; "fresh" = a new
 * session, the earlier context is gone (the chat should say so). `reason` is a short sentence.
 */
export interface SessionResumeEvent {
  type: "session_resume";
  outcome: "restored" | "fresh";
  cause: SessionResumeCause;
  reason: string;
  /** A fresh session was given this many of the conversation's last messages as context. */
  replayed?: number;
}
/** The agent has sent nothing for `seconds` while its turn runs (repeated at each multiple). */
export interface SilenceEvent {
  type: "silence";
  seconds: number;
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
  | AvailableCommandsEvent
  | ToolCallUpdateEvent
  | AgentWaitEvent
  | SessionResumeEvent
  | SilenceEvent;

export type ProviderEventType = ProviderEvent["type"];

/** The driver's answer to a permission request. */
export type PermissionVerdict = "approve" | "approve_always" | "deny" | "cancelled";

/** A prompt content block (the ACP ContentBlock subset parley sends). */
export type PromptContent =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; data: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string };
