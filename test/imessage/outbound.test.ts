/**
 * Sending against the fake: a failed send backs off (per handle, capped) and is tried again, and is
 * reported (audited, and raised once every try failed); sends to one handle never overlap; a send
 * answered without an id is a success; typing is gated on `imsg status --json`, refreshed during
 * the turn and off for good at its first rejection, and read receipts alike.
 */
import { describe, expect, it } from "vitest";
import type { LoggedRequest } from "../fakes/imsg/control.js";
import { waitFor } from "../fakes/imsg/control.js";
import { done, GUEST, imsgLab, OWNER, text } from "./channel-harness.js";

const lab = imsgLab();
const calls = (log: LoggedRequest[], method: string) =>
  log.filter((r) => r.method === method && r.answered === undefined);

/** [sent at, answered at] of every send, by process and id. */
function sendSpans(log: LoggedRequest[], to?: string): [number, number][] {
  const answered = new Map(
    log.filter((r) => r.answered !== undefined).map((r) => [`${r.pid}:${r.answered}`, r.at]),
  );
  return calls(log, "send")
    .filter((r) => to === undefined || r.params.to === to)
    .map((r) => [r.at, answered.get(`${r.pid}:${r.id}`) ?? Number.POSITIVE_INFINITY]);
}

describe("sending", () => {
  it("a failed send backs off, is audited, and goes out on the next try", async () => {
    const folder = lab.folder({ failSends: 1 });
    const c = await lab.channel({ turns: () => [[text("eventually"), done]] });
    await folder.incoming(OWNER, "hi");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    const [first, second] = sendSpans(folder.requests());
    expect(first && second).toBeTruthy();
    // The second try waited out the first backoff step (100 ms in tests) after the failure.
    expect((second?.[0] ?? 0) - (first?.[1] ?? 0)).toBeGreaterThanOrEqual(90);
    expect(c.audit.find("imessage.send", "failed")).toHaveLength(1);
    expect(folder.sent(OWNER)[0]).toMatch(/^eventually/);
  });

  it("a send that fails every try is reported and raised, and nothing is sent", async () => {
    const folder = lab.folder({ failSends: 10 });
    const c = await lab.channel({ turns: () => [] });
    await expect(c.running.transport.sendText(OWNER, "never")).rejects.toThrow(
      /sending to \+61400000000 failed/,
    );
    expect(c.audit.find("imessage.send", "failed").map((r) => r.fields?.attempt)).toEqual([1, 2, 3]);
    expect(folder.sent()).toEqual([]);
    // Backed off between tries: 100 then 200 ms (capped at 400 in tests).
    const spans = sendSpans(folder.requests());
    expect((spans[1]?.[0] ?? 0) - (spans[0]?.[1] ?? 0)).toBeGreaterThanOrEqual(90);
    expect((spans[2]?.[0] ?? 0) - (spans[1]?.[1] ?? 0)).toBeGreaterThanOrEqual(190);
    expect(c.running.ledger.size).toBe(0);
  });

  it("sends to one handle never overlap, whoever issues them", async () => {
    const folder = lab.folder({ sendDelayMs: 60 });
    const long = Array.from({ length: 3 }, (_, i) => `${String(i).repeat(3_500)}`).join("\n\n");
    const c = await lab.channel({ turns: () => [[text(long), done]] });
    await folder.incoming(OWNER, "long one");
    const proactive = Promise.all([
      c.running.transport.sendMessage(OWNER, "aside 1"),
      c.running.transport.sendMessage(OWNER, "aside 2"),
      c.running.transport.sendMessage(GUEST, "to someone else"),
    ]);
    expect(await proactive).toEqual(["", "", ""]);
    await waitFor(() => folder.sent(OWNER).length >= 5, "every part and aside");
    const spans = sendSpans(folder.requests(), OWNER).sort((x, y) => x[0] - y[0]);
    expect(spans.length).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < spans.length; i += 1)
      expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] ?? 0);
    // The answer's three paragraphs went out as three messages, in order.
    const parts = folder.sent(OWNER).filter((t) => /^(\d)\1{3499}/.test(t));
    expect(parts.map((t) => t[0])).toEqual(["0", "1", "2"]);
  });

  it("a send answered without an id is a success (returnsMessageId is false)", async () => {
    const folder = lab.folder({ sendIds: "none" });
    const c = await lab.channel({ turns: () => [[text("no id needed"), done]] });
    expect(await c.running.transport.sendMessage(OWNER, "proactive")).toBe("");
    await folder.incoming(OWNER, "hi");
    await waitFor(() => folder.sent(OWNER).some((t) => t.startsWith("no id needed")), "the answer");
    await waitFor(async () => (await c.parley.intake.countUnfinished()) === 0, "the message done");
    expect(c.running.transport.capabilities.returnsMessageId).toBe(false);
  });

  it("a proactive send to a handle nobody allowed is refused and audited", async () => {
    const folder = lab.folder();
    const c = await lab.channel({ turns: () => [] });
    expect(await c.running.transport.sendMessage("+19990001111", "hello stranger")).toBe("");
    expect(c.audit.find("channel.proactive_send_authorize", "denied")).toHaveLength(1);
    expect(folder.sent()).toEqual([]);
  });
});

describe("progress", () => {
  it("typing is refreshed while the turn runs; read marks each message", async () => {
    const folder = lab.folder();
    await lab.channel({
      turns: () => [[{ delayMs: 450 }, text("slow"), done]],
      overrides: { typingEveryMs: 100 },
    });
    await folder.incoming(OWNER, "take your time");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    const log = folder.requests();
    expect(calls(log, "typing").length).toBeGreaterThanOrEqual(3);
    expect(calls(log, "typing")[0]?.params).toEqual({ to: OWNER, typing: true });
    expect(calls(log, "read").map((r) => r.params.to)).toEqual([OWNER]);
  });

  it("typing and read are off for good after their first rejection", async () => {
    const folder = lab.folder({ rejectTyping: true, rejectRead: true });
    await lab.channel({
      turns: () => [
        [{ delayMs: 300 }, text("one"), done],
        [{ delayMs: 300 }, text("two"), done],
      ],
      overrides: { typingEveryMs: 50 },
    });
    await folder.incoming(OWNER, "first");
    await waitFor(() => folder.sent(OWNER).length === 1, "the first answer");
    await folder.incoming(OWNER, "second");
    await waitFor(() => folder.sent(OWNER).length === 2, "the second answer");
    expect(calls(folder.requests(), "typing")).toHaveLength(1);
    expect(calls(folder.requests(), "read")).toHaveLength(1);
  });

  it("neither is used when imsg status --json does not list it", async () => {
    const folder = lab.folder({ methods: ["chats.list", "watch.subscribe", "send"] });
    await lab.channel({
      turns: () => [[{ delayMs: 200 }, text("quiet"), done]],
      overrides: { typingEveryMs: 50 },
    });
    await folder.incoming(OWNER, "hi");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    expect(calls(folder.requests(), "typing")).toEqual([]);
    expect(calls(folder.requests(), "read")).toEqual([]);
  });

  it("neither is used when imsg status --json reports no advanced features (no IMCore bridge)", async () => {
    const folder = lab.folder({ advancedFeatures: false });
    await lab.channel({
      turns: () => [[{ delayMs: 200 }, text("quiet"), done]],
      overrides: { typingEveryMs: 50 },
    });
    await folder.incoming(OWNER, "hi");
    await waitFor(() => folder.sent(OWNER).length === 1, "the answer");
    expect(calls(folder.requests(), "typing")).toEqual([]);
    expect(calls(folder.requests(), "read")).toEqual([]);
  });
});
