/**
 * The kit's buffered renderer (Feishu, Weixin): the busy indicator spans the turn, the answer goes
 * out once at the end with the status line, a prompt seals the answer above it and is kept in the
 * channel's prompt ledger until decided, a post that fails marks the delivery failed.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { BufferedRenderer } from "../../../src/messaging/channel/buffered-renderer.js";
import { defineCapabilities } from "../../../src/messaging/channel/capabilities.js";

function rig(o: { fail?: boolean } = {}) {
  const posted: string[] = [];
  const events: string[] = [];
  let n = 0;
  const renderer = new BufferedRenderer({
    capabilities: defineCapabilities({ maxMessageChars: 4000, maxButtons: 0 }),
    channel: "test",
    post: async (md) => {
      if (o.fail) throw new Error("refused");
      posted.push(md);
      return [`m${++n}`];
    },
    prompts: { posted: (id) => events.push(`posted ${id}`), decided: (id) => events.push(`decided ${id}`) },
    busy: { start: () => events.push("busy"), stop: () => events.push("idle") },
    now: () => 0,
    logger: new MemoryLogger(),
    commands: { new: "/new", stop: "/stop" },
  });
  return { renderer, posted, events };
}

describe("BufferedRenderer", () => {
  it("answers once at the end, busy in between", async () => {
    const { renderer, posted, events } = rig();
    await renderer.onTurnStart();
    await renderer.onTextChunk("Hello ");
    await renderer.onTextChunk("world");
    expect(posted).toEqual([]);
    await renderer.onDone("end_turn");
    expect(posted).toEqual(["Hello world\n\nFinished in 0s"]);
    expect(events).toEqual(["busy", "idle"]);
  });

  it("a prompt seals the answer above it, is ledgered, and its outcome is posted under it", async () => {
    const { renderer, posted, events } = rig();
    await renderer.onTextChunk("Before.");
    await renderer.onPromptChoice([], "r1", { toolTitle: "rm -rf", toolPurpose: "", nonce: "n" });
    await renderer.markApproval("r1", "✅ Approved");
    await renderer.onDone("end_turn");
    expect(posted[0]).toBe("Before.");
    expect(posted[1]).toContain("Permission needed:** rm -rf");
    expect(posted[1]).toContain("Reply 1 to approve or 2 to deny.");
    expect(posted[2]).toBe("🔐 rm -rf: ✅ Approved");
    expect(events).toEqual(["posted m2", "decided m2", "idle"]);
  });

  it("a post that fails marks the delivery failed", async () => {
    const { renderer } = rig({ fail: true });
    await renderer.onTextChunk("x");
    await renderer.onDone("end_turn");
    expect(renderer.deliveryFailed).toBe(true);
  });
});
