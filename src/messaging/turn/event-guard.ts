/**
 * Shape check for ProviderEvents crossing from a provider into the driver. A malformed event is
 * logged and skipped so one bad frame cannot end a turn. Hand-written rather than a zod schema:
 * it runs on every streamed chunk, where the driver's budget is ~2 µs per event.
 */
import type { ProviderEvent } from "./provider-events.js";

const str = (v: unknown): v is string => typeof v === "string";
const optStr = (v: unknown) => v === undefined || typeof v === "string";
const optNum = (v: unknown) => v === undefined || (typeof v === "number" && Number.isFinite(v));
const TOOL_STATUSES: ReadonlySet<unknown> = new Set([
  undefined,
  "pending",
  "in_progress",
  "completed",
  "failed",
]);

export function isProviderEvent(value: unknown): value is ProviderEvent {
  if (typeof value !== "object" || value === null) return false;
  const e = value as Record<string, unknown>;
  switch (e.type) {
    case "text":
    case "thinking":
      return str(e.text);
    case "tool_call":
      return str(e.toolCallId) && str(e.title) && str(e.kind) && optStr(e.purpose);
    case "tool_result":
      return str(e.toolCallId);
    case "permission_request":
      return (
        str(e.requestId) &&
        str(e.toolCallId) &&
        str(e.title) &&
        str(e.kind) &&
        Array.isArray(e.options) &&
        e.options.every(
          (o: unknown) =>
            typeof o === "object" &&
            o !== null &&
            str((o as Record<string, unknown>).optionId) &&
            str((o as Record<string, unknown>).name) &&
            str((o as Record<string, unknown>).kind),
        )
      );
    case "compaction":
      return optNum(e.contextUsagePct) && optStr(e.summary);
    case "steer_consumed":
      return str(e.id) && str(e.summary);
    case "complete":
      return str(e.stopReason);
    case "subagent_activity":
      return optStr(e.toolCallId);
    case "usage":
      return typeof e.used === "number" && typeof e.size === "number";
    case "plan":
      return Array.isArray(e.entries);
    case "available_commands":
      return Array.isArray(e.commands);
    case "tool_call_update":
      return str(e.toolCallId) && optStr(e.title) && optStr(e.kind) && TOOL_STATUSES.has(e.status);
    case "agent_wait":
      return typeof e.position === "number" && Number.isFinite(e.position);
    case "session_resume":
      return (e.outcome === "restored" || e.outcome === "fresh") && str(e.cause) && str(e.reason);
    case "silence":
      return typeof e.seconds === "number" && Number.isFinite(e.seconds);
    default:
      return false;
  }
}
