/** Provider events tests script over and over, written once. */
import type { ProviderEvent } from "../../src/messaging/events.js";

/** A tool-permission request: Allow (a) / Deny (d), plus Always (t) when `always` is set. */
export function permissionRequest(
  o: { requestId?: string; title?: string; kind?: string; always?: boolean } = {},
): ProviderEvent {
  return {
    type: "permission_request",
    requestId: o.requestId ?? "r1",
    toolCallId: "t1",
    title: o.title ?? "rm -rf build",
    kind: o.kind ?? "delete",
    options: [
      { optionId: "a", name: "Allow", kind: "allow_once" },
      ...(o.always ? [{ optionId: "t", name: "Always", kind: "allow_always" as const }] : []),
      { optionId: "d", name: "Deny", kind: "reject_once" },
    ],
  };
}
