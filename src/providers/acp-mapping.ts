/**
 * Pure translation between ACP payloads and parley's ProviderEvents: session/update -> events, and
 * a permission verdict -> the agent's option, chosen by kind. Layer: providers (no I/O).
 */
import type {
  PermissionOption as AcpPermissionOption,
  ContentBlock,
  RequestPermissionOutcome,
  SessionConfigOption,
  SessionUpdate,
  ToolCall,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { ModelMenu, ModelOption } from "../messaging/session/agent-controls.js";
import type {
  PermissionOption,
  PermissionVerdict,
  ProviderEvent,
} from "../messaging/turn/provider-events.js";

/** What a session/update turned into, plus what the provider must remember from it. */
export interface MappedUpdate {
  events: ProviderEvent[];
  /** Set when the update reported context usage (0..100). */
  contextUsagePct?: number;
  /** Set by config_option_update: the agent's full, current set of session config options. */
  configOptions?: SessionConfigOption[];
  /** Updates parley deliberately ignores (modes, titles, notices, echoes). */
  ignored?: string;
}

/**
 * Stateful per session: remembers tool titles (a permission request may carry only the id) and
 * collects compaction summary chunks until their compaction completes.
 */
export class UpdateMapper {
  private readonly tools = new Map<string, { title: string; kind: string }>();
  private readonly summaries = new Map<string, string>();
  private lastPct: number | undefined;

  map(update: SessionUpdate): MappedUpdate {
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        return textEvent("text", update.content);
      case "agent_thought_chunk":
        return textEvent("thinking", update.content);
      case "tool_call":
        return this.toolCall(update);
      case "tool_call_update":
        return this.toolCallUpdate(update);
      case "plan":
        return {
          events: [
            {
              type: "plan",
              entries: update.entries.map((e) => ({
                content: e.content,
                status: e.status,
                priority: e.priority,
              })),
            },
          ],
        };
      case "usage_update": {
        const pct = usagePct(update.used, update.size);
        this.lastPct = pct ?? this.lastPct;
        return { events: [{ type: "usage", used: update.used, size: update.size }], contextUsagePct: pct };
      }
      case "compaction_summary_chunk": {
        const text = blockText(update.content);
        const sofar = this.summaries.get(update.compactionId) ?? "";
        this.summaries.set(update.compactionId, sofar + text);
        return { events: [] };
      }
      case "compaction_update":
        return this.compaction(update.compactionId, update.status, update.summary ?? undefined);
      case "config_option_update":
        // Not an event: the provider keeps the latest set (the model selector lives there).
        return { events: [], configOptions: update.configOptions };
      case "available_commands_update":
        return {
          events: [
            {
              type: "available_commands",
              commands: update.availableCommands.map((c) => ({ name: c.name, description: c.description })),
            },
          ],
        };
      default:
        return { events: [], ignored: update.sessionUpdate };
    }
  }

  /** Tool titles matter only within a turn; forgetting them bounds memory over a long session. */
  newTurn(): void {
    this.tools.clear();
  }

  /** Title and kind for a permission request whose toolCall is only a partial patch. */
  toolInfo(toolCall: ToolCallUpdate): { title: string; kind: string } {
    const known = this.tools.get(toolCall.toolCallId);
    return {
      title: toolCall.title ?? known?.title ?? toolCall.toolCallId,
      kind: toolCall.kind ?? known?.kind ?? "other",
    };
  }

  private toolCall(update: ToolCall): MappedUpdate {
    // Some agents announce compaction as a synthetic tool call; it is not a tool the user ran.
    if (update._meta && "contextCompaction" in update._meta) {
      return { events: [{ type: "compaction", contextUsagePct: this.lastPct }] };
    }
    const kind = update.kind ?? "other";
    this.tools.set(update.toolCallId, { title: update.title, kind });
    const purpose = toolPurpose(update.rawInput, update.content);
    const events: ProviderEvent[] = [
      {
        type: "tool_call",
        toolCallId: update.toolCallId,
        title: update.title,
        kind,
        ...(purpose !== undefined && { purpose }),
        ...(update._meta && { meta: update._meta }),
      },
    ];
    // A tool call may be announced already finished; its result frame must still be final.
    if (update.status === "completed" || update.status === "failed") {
      events.push({ type: "tool_result", toolCallId: update.toolCallId, status: update.status, final: true });
    }
    return { events };
  }

  private toolCallUpdate(update: ToolCallUpdate): MappedUpdate {
    const known = this.tools.get(update.toolCallId);
    const title = update.title ?? undefined;
    const kind = update.kind ?? undefined;
    const status = update.status ?? undefined;
    // Only what changed: a retitle ("Terminal" -> "ls -la"), a new kind, a status.
    const newTitle = title !== undefined && title !== known?.title ? title : undefined;
    const newKind = kind !== undefined && kind !== known?.kind ? kind : undefined;
    if (known) {
      if (newTitle !== undefined) known.title = newTitle;
      if (newKind !== undefined) known.kind = newKind;
    } else if (title !== undefined) {
      this.tools.set(update.toolCallId, { title, kind: kind ?? "other" });
    }
    const events: ProviderEvent[] = [];
    if (newTitle !== undefined || newKind !== undefined || status !== undefined) {
      events.push({
        type: "tool_call_update",
        toolCallId: update.toolCallId,
        ...(newTitle !== undefined && { title: newTitle }),
        ...(newKind !== undefined && { kind: newKind }),
        ...(status !== undefined && { status }),
      });
    }
    return {
      events: [
        ...events,
        {
          type: "tool_result",
          toolCallId: update.toolCallId,
          ...(status && { status }),
          ...(update._meta && { meta: update._meta }),
          final: status === "completed" || status === "failed",
        },
      ],
    };
  }

  private compaction(id: string, status: string, summary: ContentBlock[] | undefined): MappedUpdate {
    if (status === "in_progress") return { events: [{ type: "compaction", contextUsagePct: this.lastPct }] };
    const chunks = this.summaries.get(id) ?? "";
    this.summaries.delete(id);
    if (status !== "completed") return { events: [], ignored: `compaction_update:${status}` };
    const text = summary ? summary.map(blockText).join("") : chunks;
    return {
      events: [
        {
          type: "compaction",
          contextUsagePct: this.lastPct,
          ...(text !== "" && { summary: text }),
        },
      ],
    };
  }
}

/**
 * The model selector among the agent's config options: the first `select` with category "model".
 * Grouped choices are flattened in order. Malformed entries are skipped, never trusted.
 */
export function modelMenuOf(
  configOptions: readonly SessionConfigOption[] | undefined,
): ModelMenu | undefined {
  if (!Array.isArray(configOptions)) return undefined;
  const selector = configOptions.find(
    (o) => typeof o === "object" && o !== null && o.type === "select" && o.category === "model",
  );
  if (selector?.type !== "select" || typeof selector.id !== "string") return undefined;
  const options: ModelOption[] = [];
  const seen = new Set<string>();
  const add = (raw: unknown): void => {
    if (typeof raw !== "object" || raw === null) return;
    const { value, name, description } = raw as Record<string, unknown>;
    if (typeof value !== "string" || seen.has(value)) return;
    seen.add(value);
    options.push({
      id: value,
      name: typeof name === "string" && name.trim() !== "" ? name : value,
      ...(typeof description === "string" && description.trim() !== "" && { description }),
    });
  };
  for (const entry of Array.isArray(selector.options) ? (selector.options as unknown[]) : []) {
    if (typeof entry === "object" && entry !== null && "options" in entry && Array.isArray(entry.options)) {
      for (const inner of entry.options as unknown[]) add(inner);
    } else {
      add(entry);
    }
  }
  const current = typeof selector.currentValue === "string" ? selector.currentValue : undefined;
  return { configId: selector.id, current, options };
}

export function usagePct(used: number, size: number): number | undefined {
  if (!(size > 0) || !Number.isFinite(used)) return undefined;
  return Math.min(100, Math.max(0, (used / size) * 100));
}

export function toPermissionOptions(options: AcpPermissionOption[]): PermissionOption[] {
  return options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind }));
}

/**
 * The reply for a verdict, picked BY KIND because option ids are the agent's own vocabulary.
 * Approval never widens: with no allow_once, "approve" fails closed to a reject rather than
 * granting allow_always. With no reject option at all, a refusal can only be "cancelled".
 */
export function chooseOutcome(
  options: readonly AcpPermissionOption[],
  verdict: PermissionVerdict,
): RequestPermissionOutcome {
  const byKind = (...kinds: AcpPermissionOption["kind"][]): RequestPermissionOutcome | undefined => {
    for (const kind of kinds) {
      const hit = options.find((o) => o.kind === kind);
      if (hit) return { outcome: "selected", optionId: hit.optionId };
    }
    return undefined;
  };
  const reject = (): RequestPermissionOutcome =>
    byKind("reject_once", "reject_always") ?? { outcome: "cancelled" };
  switch (verdict) {
    case "approve":
      return byKind("allow_once") ?? reject();
    case "approve_always":
      return byKind("allow_always", "allow_once") ?? reject();
    case "deny":
      return reject();
    case "cancelled":
      return { outcome: "cancelled" };
  }
}

function textEvent(type: "text" | "thinking", content: ContentBlock): MappedUpdate {
  if (content.type !== "text") return { events: [], ignored: `${type}:${content.type}` };
  return { events: [{ type, text: content.text }] };
}

function blockText(block: ContentBlock): string {
  return block.type === "text" ? block.text : "";
}

/** The model-authored purpose: rawInput.description (most agents), else the first text content. */
function toolPurpose(rawInput: unknown, content: ToolCall["content"]): string | undefined {
  if (typeof rawInput === "object" && rawInput !== null && "description" in rawInput) {
    const description: unknown = rawInput.description;
    if (typeof description === "string" && description.trim() !== "") return description.trim();
  }
  for (const item of content ?? []) {
    if (item.type === "content" && item.content.type === "text" && item.content.text.trim() !== "") {
      return item.content.text.trim();
    }
  }
  return undefined;
}
