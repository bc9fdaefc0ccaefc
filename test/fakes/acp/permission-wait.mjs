// Asks for permission and waits however long it takes, then reports which option it received.
// Option ids are deliberately meaningless and out of order: the client must choose by kind.
import { request, say, serve, update } from "./lib.mjs";

const OPTIONS = [
  { optionId: "opt-x", name: "Yes please", kind: "allow_once" },
  { optionId: "opt-y", name: "Never", kind: "reject_always" },
  { optionId: "opt-z", name: "Not now", kind: "reject_once" },
  { optionId: "opt-w", name: "Always", kind: "allow_always" },
];

serve({
  "session/prompt": async ({ sessionId }) => {
    const toolCall = { toolCallId: "t1", title: "Delete build/", kind: "delete", status: "pending" };
    update(sessionId, { sessionUpdate: "tool_call", ...toolCall });
    const reply = await request("session/request_permission", { sessionId, toolCall, options: OPTIONS });
    const outcome = reply.result?.outcome;
    const picked = OPTIONS.find((o) => o.optionId === outcome?.optionId);
    say(
      sessionId,
      `fake received: ${picked ? `${picked.optionId} (${picked.kind})` : (outcome?.outcome ?? "error")}`,
    );
    return { stopReason: outcome?.outcome === "cancelled" ? "cancelled" : "end_turn" };
  },
});
