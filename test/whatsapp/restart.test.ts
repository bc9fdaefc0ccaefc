/**
 * Restarts and reconnects against the fake, with the real store. WhatsApp has no acknowledgement
 * to withhold: what it delivers again after a reconnect (an `append` batch) is deduped by its key
 * id in the journal, a turn a crash cut short is run again from the journal, and a message older
 * than `whatsapp.maxCatchUpMinutes` is not answered at all.
 */
import { describe, expect, it, vi } from "vitest";
import { permissionRequest } from "../helpers/events.js";
import { connected, done, fakeWhatsAppLab, openTransport, selfChat, text } from "./harness.js";

const lab = fakeWhatsAppLab();

const waiting = permissionRequest({ title: "slow tool", kind: "execute" });
const answers = (needle: string) => lab.fake.visible().filter((v) => v.includes(needle));

describe("a restart", () => {
  it("runs a turn a crash cut short once, and drops the same message delivered again", async () => {
    const a = await lab.channel({ turns: () => [{ steps: [text("working on it"), waiting] }] });
    await connected(a, lab.fake);
    const asked = selfChat(lab.fake, "do the slow thing");
    await lab.fake.waitFor(() => answers("slow tool").length === 1, 5000, "the turn waiting on a prompt");
    expect(await a.parley.intake.countUnfinished()).toBe(1);
    await a.crash();

    const b = await lab.channel({ home: a.home, turns: () => [[text("the slow thing is done"), done]] });
    await connected(b, lab.fake);
    // WhatsApp delivers the offline message again after the reconnect: the journal knows its id.
    lab.fake.deliver([asked], "append");
    await lab.fake.waitFor(() => answers("the slow thing is done").length > 0, 5000, "the resumed answer");
    await vi.waitFor(async () => expect(await b.parley.intake.countUnfinished()).toBe(0));
    await vi.waitFor(() => expect(b.audit.find("intake", "dropped").length).toBe(1));
    expect(b.audit.find("intake", "dropped")[0]?.fields.reason).toBe("redelivered");
    expect(answers("the slow thing is done")).toHaveLength(1);
    expect([...b.providers.values()].flatMap((p) => p.prompts)).toEqual(["do the slow thing"]);
    // The answer took over the first run's bubble (its journaled part): no second copy of it.
    expect(answers("working on it")).toEqual([]);
    expect(lab.fake.visible()).toHaveLength(2);
    expect(lab.fake.visible()[0]).toMatch(/^the slow thing is done/);
  });

  it("answers an `append` message after a reconnect once, and a stale one not at all", async () => {
    const c = await lab.channel({
      whatsapp: { maxCatchUpMinutes: 15 },
      overrides: { backoff: { initialMs: 1, maxMs: 5 }, random: () => 0.5 },
      turns: () => [[text("caught up"), done]],
    });
    await connected(c, lab.fake);
    const before = lab.fake.socketCount;
    lab.fake.disconnect(428);
    await lab.fake.waitFor(
      () => lab.fake.socketCount === before + 1 && c.running.connection.state === "open",
      5000,
      "the reconnect",
    );
    const now = lab.fake.now();
    const fresh = lab.fake.build({
      chat: lab.fake.operator.pn,
      fromMe: true,
      text: "sent while you were away",
      at: now - 5 * 60_000,
    });
    const stale = lab.fake.build({
      chat: lab.fake.operator.pn,
      fromMe: true,
      text: "sent this morning",
      at: now - 3 * 60 * 60_000,
    });
    lab.fake.deliver([stale, fresh], "append");
    // The same batch again (WhatsApp repeats what it is not sure arrived).
    lab.fake.deliver([stale, fresh], "append");
    await lab.fake.waitFor(() => answers("caught up").length > 0, 5000, "the answer");
    await vi.waitFor(async () => expect(await c.parley.intake.countUnfinished()).toBe(0));
    await vi.waitFor(() => expect(c.audit.find("intake", "dropped")).toHaveLength(1));
    expect(answers("caught up")).toHaveLength(1);
    expect([...c.providers.values()].flatMap((p) => p.prompts)).toEqual(["sent while you were away"]);
    expect(c.audit.find("whatsapp.catch_up", "dropped").map((r) => r.fields.reason)).toEqual([
      "too_old",
      "too_old",
    ]);
    // The stale one got no reaction either: nothing says it was seen.
    expect(lab.fake.reactionOn(stale.key.id ?? "")).toBeUndefined();
    expect(lab.fake.reactionOn(fresh.key.id ?? "")).toBe("✅");
  });
});

describe("the window between a send and its record", () => {
  it("a part sent again after a crash carries the same message id: the chat keeps one", async () => {
    const { transport, operator } = await openTransport(lab.fake);
    const first = await transport.sendText(operator.pn, "the answer", "turn-7:0");
    // The crash came before the ledger recorded it: the next run sends the same part again.
    const again = await transport.sendText(operator.pn, "the answer", "turn-7:0");
    expect(again.id).toBe(first.id);
    expect(lab.fake.visible()).toEqual(["the answer"]);
    // A different part is a different message.
    await transport.sendText(operator.pn, "more", "turn-7:1");
    expect(lab.fake.visible()).toEqual(["the answer", "more"]);
  });
});
