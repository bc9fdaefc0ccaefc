/**
 * TeamsRenderer's timing, on an injected clock with a recording Connector double (every send,
 * edit and typing call it would make, in order): live edits throttled, the typing indicator kept
 * alive until the turn ends, the progress message reused as the first answer chunk, an approval
 * card taking over a message that showed only its status line. What reaches Teams over the wire
 * is tested end to end in display.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { ChoiceBook } from "../../src/teams/cards.js";
import type { OutboundActivity, TeamsReference } from "../../src/teams/client.js";
import type { TeamsSender } from "../../src/teams/outbox.js";
import { TeamsOutbox } from "../../src/teams/outbox.js";
import { TeamsRenderer } from "../../src/teams/renderer.js";
import { ManualClock } from "../helpers/manual-clock.js";

class RecordingSender implements TeamsSender {
  readonly messages: { id: string; activity: OutboundActivity; edits: number }[] = [];
  readonly log: string[] = [];
  typings = 0;
  async send(_r: TeamsReference, activity: OutboundActivity): Promise<string> {
    const id = `m${this.messages.length + 1}`;
    this.messages.push({ id, activity, edits: 0 });
    this.log.push(`send ${id}`);
    return id;
  }
  async update(_r: TeamsReference, id: string, activity: OutboundActivity): Promise<void> {
    const m = this.messages.find((x) => x.id === id);
    if (!m) throw new Error(`no ${id}`);
    m.activity = activity;
    m.edits += 1;
    this.log.push(`update ${id}`);
  }
  async typing(): Promise<void> {
    this.typings += 1;
  }
  texts(): string[] {
    return this.messages.map((m) => m.activity.text ?? "");
  }
}

function setup(o: { throttleMs?: number; typingEveryMs?: number } = {}) {
  const clock = new ManualClock();
  const sender = new RecordingSender();
  const outbox = new TeamsOutbox({
    sender,
    address: {
      conversationId: "a:1",
      serviceUrl: "https://smba.example/amer/",
      userAccountId: "29:u",
      identity: "ann@contoso.example",
      botId: "28:bot",
    },
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
  });
  const renderer = new TeamsRenderer({
    outbox,
    owner: false,
    choices: new ChoiceBook(),
    audit: new MemoryAuditSink(),
    logger: new MemoryLogger(),
    clock,
    throttleMs: o.throttleMs ?? 1000,
    typingEveryMs: o.typingEveryMs ?? 3000,
  });
  return { clock, sender, renderer };
}

describe("teams renderer", () => {
  it("streams into one live message, edited at most once per throttle window", async () => {
    const { clock, sender, renderer } = setup();
    await renderer.onTurnStart();
    for (let i = 0; i < 20; i += 1) await renderer.onTextChunk(`word${i} `);
    expect(sender.messages).toEqual([]);
    await clock.advance(0);
    expect(sender.log).toEqual(["send m1"]);
    for (let i = 0; i < 20; i += 1) await renderer.onTextChunk(`more${i} `);
    await clock.advance(999);
    expect(sender.log).toEqual(["send m1"]);
    await clock.advance(1);
    expect(sender.log).toEqual(["send m1", "update m1"]);
    expect(sender.texts()[0]).toContain("more19");
    await renderer.onDone("end_turn");
    await renderer.close();
    // The live message became the answer: one message, the status line gone, the footer on it.
    expect(sender.messages).toHaveLength(1);
    expect(sender.texts()[0]).toMatch(/^word0 [\s\S]*more19\s*\n\n_Finished in \d+s_$/);
  });

  it("the progress message opened by a tool call is reused as the first answer chunk", async () => {
    const { clock, sender, renderer } = setup();
    await renderer.onTurnStart();
    await renderer.onToolCall("t1", "ls -la", "execute", "");
    await clock.advance(0);
    expect(sender.texts()).toEqual(["_🔧 ls -la…_"]);
    await renderer.onToolUpdate("t1", { status: "completed" });
    await renderer.onTextChunk("Three files.");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(sender.texts()).toEqual(["Three files.\n\n_Finished in 0s_"]);
  });

  it("the typing indicator is kept alive while the agent works, and stops with the turn", async () => {
    const { clock, sender, renderer } = setup({ typingEveryMs: 3000 });
    await renderer.onTurnStart();
    expect(sender.typings).toBe(1);
    await clock.advance(3000);
    await clock.advance(3000);
    expect(sender.typings).toBe(3);
    await renderer.onTextChunk("done");
    await renderer.onDone("end_turn");
    await clock.advance(10_000);
    expect(sender.typings).toBe(3);
    await renderer.close();
    expect(clock.pending).toBe(0);
  });

  it("an approval card takes over a message that showed only its status line", async () => {
    const { clock, sender, renderer } = setup();
    await renderer.onTurnStart();
    await renderer.onToolCall("t1", "rm -rf dist", "delete", "");
    await clock.advance(0);
    expect(sender.texts()).toEqual(["_🔧 rm -rf dist…_"]);
    await renderer.onPromptChoice([], "r1", {
      toolTitle: "rm -rf dist",
      toolPurpose: "",
      nonce: "n".repeat(22),
    });
    expect(sender.messages).toHaveLength(1);
    expect(sender.messages[0]?.activity.text).toBeUndefined();
    expect(JSON.stringify(sender.messages[0]?.activity.attachments)).toContain("Permission needed");
    await renderer.markApproval("r1", "✅ Approved (this once)");
    await renderer.onTextChunk("Removed.");
    await clock.advance(1000);
    await renderer.onDone("end_turn");
    await renderer.close();
    // The continuation opened below the card; the card shows its outcome and no buttons.
    expect(sender.texts().slice(1)).toEqual(["Removed.\n\n_Finished in 1s_"]);
    const card = JSON.stringify(sender.messages[0]?.activity.attachments);
    expect(card).toContain("Approved (this once)");
    expect(card).not.toContain("Action.Submit");
  });

  it("a turn that never reached its end says so, never leaving the user waiting", async () => {
    const { sender, renderer } = setup();
    await renderer.onTurnStart();
    await renderer.close(new Error("the agent exited"));
    expect(sender.texts()).toEqual(["⚠️ The agent did not answer. Try again, or /new to start fresh."]);
  });
});
