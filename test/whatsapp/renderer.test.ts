/**
 * The WhatsApp renderer on a fake clock, through the transport and the fake's socket: edits keep
 * their pace (single-flight, newest text), the 20-minute edit window rolls the answer into a new
 * bubble that repeats the prefix, a refused edit or a failed send loses no text, every message stays
 * within 4,096 characters with its code fences balanced, no credential reaches any text, edit,
 * caption or file name, no message mentions anyone, an unprompted turn shows nothing until its end,
 * and "typing" stops while a prompt waits on a person.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { PendingApprovals, WidgetApprovalDecider } from "../../src/messaging/approval/approvals.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import { runTurnPipeline } from "../../src/messaging/turn/pipeline.js";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { EDIT_WINDOW_MARGIN_MS } from "../../src/whatsapp/bubbles.js";
import type { WhatsAppRendererOptions } from "../../src/whatsapp/renderer.js";
import { WhatsAppRenderer } from "../../src/whatsapp/renderer.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";
import { done, openTransport, PNG, text } from "./harness.js";

const KEY = "AKIAQ7ZR3M5TXW2KP9VB";
const shown = (s: string) => s.replace(/[*_~`]/g, "");

async function rig(o: Partial<WhatsAppRendererOptions> = {}, editWindowMs?: number) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const fake = await FakeWhatsApp.start({
    lifetimeMs: 30_000,
    now: () => clock.now(),
    ...(editWindowMs ? { editWindowMs } : {}),
  });
  const { transport, operator } = await openTransport(fake);
  const renderer = new WhatsAppRenderer(transport, {
    chat: operator.pn,
    timers: clock,
    now: () => clock.now(),
    editIntervalMs: 2000,
    firstFrameMs: 1000,
    ...(editWindowMs ? { editWindowMs } : {}),
    ...o,
  });
  return { clock, fake, renderer, operator };
}

/** Every text and edit parley put on the wire. */
const bodies = (fake: FakeWhatsApp) =>
  fake.records.flatMap((r) => (r.kind === "send" || r.kind === "edit" ? [r.text] : []));

describe("streaming by edits", () => {
  it("keeps the pace on a fake clock: one frame per interval at most, each showing the newest text", async () => {
    const { clock, fake, renderer } = await rig();
    await renderer.onTurnStart();
    for (let i = 0; i < 40; i += 1) {
      await renderer.onTextChunk(`word${i} `);
      await clock.advance(250);
    }
    await clock.advance(2500);
    const edits = fake.records.filter((r) => r.kind === "edit" || r.kind === "send");
    expect(edits.length).toBeGreaterThanOrEqual(4);
    expect(edits.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < edits.length; i += 1) {
      const gap = (edits[i] as { at: number }).at - (edits[i - 1] as { at: number }).at;
      expect(gap).toBeGreaterThanOrEqual(2000);
    }
    // The last frame rendered everything written by then, not a backlog of old frames.
    expect(fake.visible()[0]).toContain("word39");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.visible()).toHaveLength(1);
    expect(fake.visible()[0]).toMatch(/^word0 [\s\S]*word39\n\n_Finished in \d+s_$/);
    await fake.stop();
  });

  it("the 20-minute edit window rolls the answer into a new bubble that repeats the prefix", async () => {
    const window = 20 * 60_000;
    const { clock, fake, renderer } = await rig({}, window);
    await renderer.onTurnStart();
    await renderer.onTextChunk("The first part of a slow answer. ");
    await clock.advance(3000);
    expect(fake.visible()).toHaveLength(1);
    // The agent goes quiet past the window's end (minus its margin): the bubble is closed.
    await clock.advance(window - EDIT_WINDOW_MARGIN_MS);
    await renderer.onTextChunk("The second part, much later.");
    await clock.advance(3000);
    await renderer.onDone("end_turn");
    await renderer.close();
    const [first, second] = fake.visible();
    expect(first).toContain("The first part of a slow answer.");
    expect(first).not.toContain("second part");
    expect(second).toMatch(/^The first part of a slow answer\. The second part, much later\./);
    expect(fake.records.filter((r) => r.kind === "refused")).toEqual([]);
    expect(renderer.deliveryFailed).toBe(false);
    await fake.stop();
  });

  it("a refused edit closes its bubble; the next bubble repeats the prefix, nothing is lost", async () => {
    const { clock, fake, renderer } = await rig();
    await renderer.onTurnStart();
    await renderer.onTextChunk("Alpha. ");
    await clock.advance(3000);
    fake.failNext("edit");
    await renderer.onTextChunk("Beta. ");
    await clock.advance(3000);
    await renderer.onTextChunk("Gamma.");
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.visible().at(-1)).toMatch(/^Alpha\. Beta\. Gamma\./);
    expect(renderer.deliveryFailed).toBe(false);
    await fake.stop();
  });

  it("a failed send is retried by a later frame, never counted as shown", async () => {
    const { clock, fake, renderer } = await rig();
    await renderer.onTurnStart();
    fake.failNext("send");
    await renderer.onTextChunk("Hello ");
    await clock.advance(1500);
    expect(fake.visible()).toEqual([]);
    await renderer.onTextChunk("world.");
    await clock.advance(3000);
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.visible()).toEqual([expect.stringMatching(/^Hello world\.\n\n_Finished/)]);
    await fake.stop();
  });
});

describe("every message within the cap, every sink screened", () => {
  async function turn(steps: ScriptStep[], root?: string) {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const fake = await FakeWhatsApp.start({ lifetimeMs: 30_000, now: () => clock.now() });
    const { transport, operator } = await openTransport(fake);
    const renderer = new WhatsAppRenderer(transport, {
      chat: operator.pn,
      timers: clock,
      now: () => clock.now(),
      editIntervalMs: 0,
      firstFrameMs: 0,
      ...(root ? { uploads: { root: async () => root, allowed: () => true } } : {}),
    });
    const provider = new ScriptedProvider([steps]);
    const sessions = new SessionManager({ createProvider: () => provider });
    const release = sessions.tryAcquire("k");
    if (!release) throw new Error("lock");
    const registry = new PendingApprovals({ timeoutMs: 200 });
    await runTurnPipeline(
      { sessions, audit: new MemoryAuditSink() },
      {
        sessionKey: "k",
        channelType: "whatsapp",
        text: "go",
        renderer,
        release,
        policy: { decider: new WidgetApprovalDecider(registry) },
      },
    );
    await settle();
    return { fake, renderer };
  }

  it("long answers: each bubble at most 4,096 characters, fences balanced in each", async () => {
    const prose = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(40);
    const code = `\`\`\`python\n${"print('a line of code that repeats')\n".repeat(300)}\`\`\`\n`;
    const { fake } = await turn([text(`${prose}\n\n`), text(code), text(`\n${prose}`), done]);
    const sent = bodies(fake);
    expect(fake.visible().length).toBeGreaterThan(3);
    for (const body of sent) {
      expect(Array.from(body).length).toBeLessThanOrEqual(4096);
      const fences = body.split("\n").filter((l) => l.trim().startsWith("```")).length;
      expect(fences % 2).toBe(0);
    }
    await fake.stop();
  });

  it("a key split across chunks or by emphasis reaches no text, edit, caption or file name; no one is mentioned", async () => {
    const root = mkdtempSync(join(tmpdir(), "parley-wa-root-"));
    writeFileSync(join(root, "chart.png"), PNG);
    writeFileSync(join(root, `${KEY}.png`), PNG);
    const { fake } = await turn(
      [
        text("Split: AKIAQ7ZR3M"),
        text("5TXW2KP9VB and emphasis: AKIA**Q7ZR**3M5TXW2KP9VB.\n\n"),
        text(`![AKIA**Q7ZR**3M5TXW2KP9VB chart](./chart.png)\n![named](./${KEY}.png)\n`),
        permissionRequest({ requestId: "r1", title: "curl -H 'x: AKIA**Q7ZR**3M5TXW2KP9VB'" }),
        text("Ask @4917012345678 about it."),
        done,
      ],
      root,
    );
    const everything = [...bodies(fake), ...fake.outbox.map((m) => JSON.stringify(m.message))];
    for (const body of everything) {
      expect(body).not.toContain(KEY);
      expect(shown(body)).not.toContain(KEY);
      expect(body).not.toContain("Q7ZR3M5TXW2KP9VB");
    }
    const images = fake.outbox.filter((m) => m.message?.imageMessage);
    expect(images).toHaveLength(1);
    expect(images[0]?.message?.imageMessage?.caption).toContain("[REDACTED: credential]");
    expect(fake.messages.every((m) => m.mentions === 0)).toBe(true);
    expect(fake.visible().join("\n")).toContain("@4917012345678");
    await fake.stop();
  });
});

describe("what a turn shows while it runs", () => {
  it("an unprompted turn shows nothing, reacts to nothing, and stays silent when told to", async () => {
    let spoke = 0;
    const { clock, fake, renderer } = await rig({
      unprompted: true,
      messageId: JSON.stringify({ id: "X", fromMe: false, participant: null }),
      onDelivered: () => (spoke += 1),
    });
    await renderer.onTurnStart();
    await renderer.onTextChunk("NO_REPLY");
    await clock.advance(10_000);
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.records.filter((r) => r.kind !== "presence")).toEqual([]);
    expect(fake.presence()).toEqual([]);
    expect(spoke).toBe(0);
    await fake.stop();
  });

  it("an unprompted answer that falls inside the cooldown is not sent", async () => {
    const { clock, fake, renderer } = await rig({ unprompted: true, maySpeak: () => false });
    await renderer.onTurnStart();
    await renderer.onTextChunk("Something to say.");
    await clock.advance(5000);
    await renderer.onDone("end_turn");
    await renderer.close();
    expect(fake.visible()).toEqual([]);
    await fake.stop();
  });

  it("typing stops while a prompt waits on a person, and resumes with the agent", async () => {
    const { clock, fake, renderer } = await rig({ typingIntervalMs: 5000 });
    await renderer.onTurnStart();
    await renderer.onTextChunk("Let me check. ");
    await clock.advance(1500);
    await renderer.onPromptChoice(
      [
        { id: "a", label: "Allow", verdict: "approve" },
        { id: "d", label: "Deny", verdict: "deny" },
      ],
      "r1",
      { toolTitle: "ls", toolPurpose: "", nonce: "n" },
    );
    await vi.waitFor(() => expect(fake.presence().at(-1)?.type).toBe("unavailable"));
    const atPrompt = fake.presence().length;
    await clock.advance(60_000);
    expect(fake.presence().length).toBe(atPrompt);
    // Paused, then unavailable again: the phone notifies while nothing types.
    expect(
      fake
        .presence()
        .slice(-2)
        .map((p) => p.type),
    ).toEqual(["paused", "unavailable"]);
    await renderer.markApproval("r1", "✅ Approved (this once)");
    await renderer.onTextChunk("Done.");
    // WhatsApp shows a chat state only from an available account: available first, then composing.
    await vi.waitFor(() =>
      expect(
        fake
          .presence()
          .slice(-2)
          .map((p) => p.type),
      ).toEqual(["available", "composing"]),
    );
    await renderer.onDone("end_turn");
    await renderer.close();
    await clock.advance(1);
    expect(fake.visible()).toEqual([
      "Let me check.",
      "🔐 *Permission needed:* ls\n\n*✅ Approved (this once)*",
      expect.stringMatching(/^Done\.\n\n_Finished/),
    ]);
    await fake.stop();
  });
});
