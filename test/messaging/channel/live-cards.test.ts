/**
 * The kit's LiveRenderer for a surface whose prompt and choices are whole messages (cards): the
 * prompt's title and purpose reach the surface display-safe, a decided prompt may become a
 * whole message of the surface's own, and [OPTIONS:] kept apart come in a message of their own
 * after the text (listed as text when that message did not land). Off by default: a surface
 * without them keeps its widgets on the text.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { LiveRenderer } from "../../../src/messaging/channel/live-renderer.js";
import type { LiveMessage, LiveSurface, PromptAbout } from "../../../src/messaging/channel/live-surface.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}x9Y8z7`;

type Card = { kind: string; lines: readonly string[] };
type Call = { op: "post" | "edit"; id: string; message: LiveMessage<Card | null> };

function cardSurface(extra: Partial<LiveSurface<Card | null>> = {}) {
  const calls: Call[] = [];
  const abouts: PromptAbout[] = [];
  let next = 0;
  const surface: LiveSurface<Card | null> = {
    capabilities: {
      maxMessageChars: 1000,
      tableMode: "off",
      nativeTables: false,
      mentionGrammars: false,
      maxButtons: 5,
    } as LiveSurface<Card | null>["capabilities"],
    sourceCap: 900,
    commands: { new: "/new", stop: "/stop" },
    plain: (t) => t,
    quiet: (t) => `_${t}_`,
    decided: (_head, outcome, title, purpose) => ({
      body: "",
      widgets: { kind: "decided", lines: [title, purpose, outcome] },
    }),
    promptHead: (title) => `Permission: ${title}`,
    promptBody: (head, hint) => `${head}\n${hint}`,
    fit: (source) => (source ? [source] : []),
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: (body) => body.length <= 1000,
    post: async (message) => {
      next += 1;
      calls.push({ op: "post", id: String(next), message });
      return String(next);
    },
    edit: async (id, message) => void calls.push({ op: "edit", id, message }),
    refused: () => false,
    options: (choices) => ({ kind: "options", lines: [...choices] }),
    optionsApart: true,
    approval: (_r, _n, options, title, purpose) => {
      abouts.push({ title, purpose });
      return { widgets: { kind: "prompt", lines: [title, purpose] }, shown: options };
    },
    noWidgets: null,
    ...extra,
  };
  return { surface, calls, abouts };
}

function renderer(surface: LiveSurface<Card | null>, clock = new ManualClock()) {
  return new LiveRenderer<Card | null>({
    channel: "test",
    surface,
    timers: clock,
    now: () => clock.now(),
    logger: new MemoryLogger(),
    throttleMs: 0,
  });
}

const OPTIONS = "Which one?\n[OPTIONS: Red | Blue]";

describe("LiveRenderer: [OPTIONS:] apart", () => {
  it("come in a message of their own after the text, which keeps its status line and no widgets", async () => {
    const { surface, calls } = cardSurface();
    const r = renderer(surface);
    await r.onTurnStart();
    await r.onTextChunk(OPTIONS);
    await r.onDone("end_turn");
    await r.close();
    expect(calls.map((c) => [c.op, c.message.body, c.message.widgets?.kind])).toEqual([
      ["post", "Which one?\n_Finished in 0s_", undefined],
      ["post", "", "options"],
    ]);
    expect(calls[1]?.message.widgets?.lines).toEqual(["Red", "Blue"]);
  });

  it("are listed as text when their message did not land, and the delivery counts as failed", async () => {
    const { surface, calls } = cardSurface();
    const post = surface.post;
    surface.post = async (message) => (message.widgets ? null : post(message));
    const r = renderer(surface);
    await r.onTurnStart();
    await r.onTextChunk(OPTIONS);
    await r.onDone("end_turn");
    await r.close();
    expect(calls.map((c) => c.message.body)).toEqual(["Which one?\n_Finished in 0s_", "1. Red\n2. Blue"]);
    expect(r.deliveryFailed).toBe(true);
  });

  it("stay on the last sealed message for a surface that does not keep them apart", async () => {
    const { surface, calls } = cardSurface({ optionsApart: undefined });
    const r = renderer(surface);
    await r.onTurnStart();
    await r.onTextChunk(OPTIONS);
    await r.onDone("end_turn");
    await r.close();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.message.widgets).toEqual({ kind: "options", lines: ["Red", "Blue"] });
  });
});

describe("LiveRenderer: a prompt laid out by the surface", () => {
  it("hands the surface the prompt's title and purpose, display-safe, and writes its decided message on it", async () => {
    const { surface, calls, abouts } = cardSurface();
    const r = renderer(surface);
    await r.onTurnStart();
    const context = { toolTitle: `deploy\nnow ${"x".repeat(300)}`, toolPurpose: `push ${TOKEN}`, nonce: "n" };
    expect(await r.onPromptChoice([], "r1", context)).toBe(true);
    await r.markApproval("r1", "✅ Approved");
    await r.close();
    const about = abouts[0] as PromptAbout;
    expect(about.title.startsWith("deploy now ")).toBe(true);
    expect(Array.from(about.title).length).toBeLessThanOrEqual(200);
    expect(about.purpose).not.toContain(TOKEN.slice(4, 20));
    expect(calls[0]?.message.widgets).toEqual({ kind: "prompt", lines: [about.title, about.purpose] });
    expect(calls[1]).toEqual({
      op: "edit",
      id: "1",
      message: { body: "", widgets: { kind: "decided", lines: [about.title, about.purpose, "✅ Approved"] } },
    });
  });

  it("a prompt never decided becomes the surface's decided message at the close", async () => {
    const { surface, calls } = cardSurface();
    const r = renderer(surface);
    await r.onTurnStart();
    await r.onPromptChoice([], "r1", { toolTitle: "ls", toolPurpose: "", nonce: "n" });
    await r.close();
    const edit = calls.find((c) => c.op === "edit");
    expect(edit?.message.widgets?.kind).toBe("decided");
    expect(edit?.message.widgets?.lines).toEqual(["ls", "", expect.stringContaining("ended")]);
  });

  it("the close returns only once an abandoned prompt's outcome has landed, after the turn's end too", async () => {
    const { surface, calls } = cardSurface();
    // The platform answers an edit a moment later (a macrotask, not a microtask).
    surface.edit = (id, message) =>
      new Promise((resolve) => setImmediate(() => resolve(void calls.push({ op: "edit", id, message }))));
    const r = renderer(surface);
    await r.onTurnStart();
    await r.onPromptChoice([], "r1", { toolTitle: "ls", toolPurpose: "", nonce: "n" });
    await r.onDone("end_turn");
    await r.close();
    expect(calls.filter((c) => c.op === "edit").map((c) => c.message.widgets?.kind)).toEqual(["decided"]);
  });
});
