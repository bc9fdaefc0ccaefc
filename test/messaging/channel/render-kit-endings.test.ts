/**
 * The render kit's endings and hint, pure: a reason for a failed turn (never an empty notice), the
 * fresh-session notice, and the typed-reply hint that names exactly the choices shown.
 */
import { describe, expect, it } from "vitest";
import {
  freshSessionNotice,
  noAnswerNotice,
  turnStatusLine,
  typedReplyHint,
} from "../../../src/messaging/channel/render-kit.js";

describe("endings", () => {
  const reason = "agent failed the turn: API Error: Unable to connect to API (ECONNREFUSED)";

  it("a failed turn with no answer says why and the way out", () => {
    expect(noAnswerNotice(true, "/new", reason)).toBe(
      "⚠️ Agent failed the turn: API Error: Unable to connect to API (ECONNREFUSED)\nTry again, or /new to start fresh.",
    );
    expect(noAnswerNotice(true, "/new")).toBe(
      "⚠️ The agent did not answer. Try again, or /new to start fresh.",
    );
    expect(noAnswerNotice(false, "/new")).toBe("(no answer)");
  });

  it("the status line carries the reason unless the notice already does", () => {
    expect(turnStatusLine("error", { elapsedMs: 172_000, error: reason })).toBe(
      `⚠️ Failed after 2m 52s: ${reason}`,
    );
    expect(turnStatusLine("error", { elapsedMs: 1_000, error: reason, reasonShown: true })).toBe(
      "⚠️ Finished in 1s",
    );
    expect(turnStatusLine("cancelled", { elapsedMs: 3_000 })).toBe("🛑 Stopped · Finished in 3s");
    expect(turnStatusLine("end_turn", { elapsedMs: 3_000, contextUsagePct: 42 })).toBe(
      "Finished in 3s · 🟡 ctx 42%",
    );
  });

  it("a fresh session says why the old one was closed and that its context is gone", () => {
    expect(freshSessionNotice("agent_exited", "this agent cannot restore an earlier session")).toBe(
      "⚠️ I had to start a fresh agent session because the agent stopped (this agent cannot restore an earlier session): the earlier context of this conversation is gone.",
    );
  });

  it("a fresh session given the conversation's last messages says how many, not that all is gone", () => {
    expect(freshSessionNotice("idle", "", 5)).toBe(
      "⚠️ I had to start a fresh agent session because it had been idle: it was given this conversation's last 5 messages; anything earlier is gone.",
    );
    expect(freshSessionNotice("idle", "", 1)).toContain("last message; anything earlier is gone.");
  });
});

describe("typedReplyHint", () => {
  const v = (...verdicts: ("approve" | "approve_always" | "deny")[]) =>
    verdicts.map((verdict) => ({ verdict }));

  it("names exactly the choices shown", () => {
    expect(typedReplyHint(v("approve", "deny"), true)).toBe("Or reply 1 to approve or 2 to deny.");
    expect(typedReplyHint(v("approve_always", "approve", "deny"), true)).toBe(
      "Or reply 1 to approve, 2 to deny, 3 to always allow.",
    );
    expect(typedReplyHint(v("deny"), false)).toBe("Reply 2 to deny.");
    expect(typedReplyHint([], false)).toBe("Reply 2 to deny.");
  });
});
