/**
 * The conversation around the turns on Webex: the command table (an unknown `/word` gets help),
 * a message held behind a running turn gets its receipt, and a dropped device socket reconnects.
 */
import { describe, expect, it } from "vitest";
import { shown } from "../conformance/webex.harness.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { WebexOptions } from "./harness.js";
import { ALICE, DM, done, text, until, webexLab } from "./harness.js";

const lab = webexLab();
const channel = (o?: WebexOptions) => lab.channel(o);

const everything = () => lab.fake.botMessages().flatMap(shown);

describe("webex conversation", () => {
  it("an unknown /word gets the help, and reaches no agent", async () => {
    const c = await channel({ turns: [[text("never"), done]] });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "/sesions" });
    await until(() => everything().some((v) => v.includes("/new")), "the help");
    const help = everything().join("\n");
    for (const name of ["/new", "/stop", "/yolo", "/model", "/queue", "/steer", "/status", "/compact"])
      expect(help).toContain(name);
    expect(c.providers).toHaveLength(0);
  });

  it("mid-turn in queue mode: a receipt on its own message, the held message answered after", async () => {
    const timers = new ManualClock();
    const c = await channel({
      webex: { queueMode: "queue" },
      turns: [
        [{ delayMs: 60_000 }, text("first answer"), done],
        [text("second answer"), done],
      ],
      provider: { timers },
    });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "first" });
    await until(() => c.providers[0]?.hasActiveTurn() === true, "the turn");
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "second" });
    await until(() => everything().some((v) => /Queued/.test(v)), "the receipt");
    await timers.advance(60_000);
    await until(() => everything().some((v) => v.includes("second answer")), "the drained message");
    const all = lab.fake
      .botMessages(DM)
      .map((m) => m.markdown)
      .join("\n");
    expect(all.indexOf("first answer")).toBeLessThan(all.indexOf("second answer"));
  });

  it("a dropped device socket reconnects and the next message is answered", async () => {
    const clock = new ManualClock();
    const c = await channel({ turns: [[text("still here"), done]], clock });
    lab.fake.dropSockets();
    await until(() => clock.pending > 0, "the reconnect scheduled");
    expect(c.logger.entries.some((e) => e.message.includes("reconnecting"))).toBe(true);
    await clock.advance(60_000);
    await until(() => lab.fake.callsTo("POST", /^\/wdm\/devices$/).length === 2, "a second registration");
    // The dropped connection's device was deleted, not left behind.
    expect(lab.fake.devices.size).toBe(1);
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "hello?" });
    await until(() => everything().some((v) => v.includes("still here")), "the answer");
  });

  it("/cancel (the alias of /stop) stops a running turn", async () => {
    const timers = new ManualClock();
    const c = await channel({ turns: [[{ delayMs: 60_000 }, text("too late"), done]], provider: { timers } });
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "a long job" });
    await until(() => c.providers[0]?.hasActiveTurn() === true, "the turn");
    lab.fake.userMessage({ email: ALICE, roomId: DM, text: "/cancel" });
    await until(() => everything().some((v) => v.includes("Stopped")), "the stopped turn");
    await timers.advance(60_000);
    expect(everything().some((v) => v.includes("too late"))).toBe(false);
  });
});
