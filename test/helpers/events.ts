/** Provider events tests script over and over, written once. */
import type { ProviderEvent } from "../../src/messaging/turn/provider-events.js";

/**
 * A tool-permission request: Allow (a) / Deny (d), plus Always (t) when `always` is set; only Deny
 * when `denyOnly` is (a prompt that can hold a turn but never let the tool run).
 */
export function permissionRequest(
  o: { requestId?: string; title?: string; kind?: string; always?: boolean; denyOnly?: boolean } = {},
): ProviderEvent {
  return {
    type: "permission_request",
    requestId: o.requestId ?? "r1",
    toolCallId: "t1",
    title: o.title ?? "rm -rf build",
    kind: o.kind ?? "delete",
    options: [
      ...(o.denyOnly ? [] : [{ optionId: "a", name: "Allow", kind: "allow_once" as const }]),
      ...(o.always ? [{ optionId: "t", name: "Always", kind: "allow_always" as const }] : []),
      { optionId: "d", name: "Deny", kind: "reject_once" },
    ],
  };
}
