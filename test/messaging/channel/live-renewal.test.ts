/**
 * The LiveRenderer's knobs for a platform whose live message has a lifetime (off by default): the
 * turn's first frame at the throttle's slot as the turn starts (`frameAtStart`), a frame written
 * even unchanged while the surface says its message is expiring, and a subclass asking for a frame
 * (its surface's renewal timer) through the protected `scheduleEdit`.
 */
import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { LiveRenderer, type LiveRendererOptions } from "../../../src/messaging/channel/live-renderer.js";
import type { LiveMessage, LiveSurface } from "../../../src/messaging/channel/live-surface.js";
import { ManualClock } from "../../helpers/manual-clock.js";

type Call = { op: "post" | "edit"; message: LiveMessage<null> };

function surface(expiring?: () => boolean) {
  const calls: Call[] = [];
  const s: LiveSurface<null> = {
    capabilities: {
      maxMessageChars: 1000,
      tableMode: "off",
      nativeTables: false,
    } as LiveSurface<null>["capabilities"],
    sourceCap: 900,
    commands: { new: "/new", stop: "/stop" },
    plain: (t) => t,
    quiet: (t) => `_${t}_`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    promptHead: (title) => title,
    promptBody: (head, hint) => `${head}\n${hint}`,
    fit: (source) => (source ? [source] : []),
    join: (body, footer) => (body && footer ? `${body}\n${footer}` : body || footer),
    fits: () => true,
    post: async (message) => {
      calls.push({ op: "post", message });
      return "m1";
    },
    edit: async (_id, message) => void calls.push({ op: "edit", message }),
    refused: () => false,
    options: () => null,
    approval: (_r, _n, options) => ({ widgets: undefined, shown: options }),
    noWidgets: null,
    ...(expiring ? { expiring } : {}),
  };
  return { s, calls };
}

class Renewing extends LiveRenderer<null> {
  renew(): void {
    this.scheduleEdit();
  }
}

function renderer(s: LiveSurface<null>, clock: ManualClock, more: Partial<LiveRendererOptions<null>> = {}) {
  return new Renewing({
    channel: "test",
    surface: s,
    timers: clock,
    now: () => clock.now(),
    logger: new MemoryLogger(),
    throttleMs: 100,
    stallMarks: false,
    ...more,
  });
}

describe("LiveRenderer for a live message with a lifetime", () => {
  it("frameAtStart: the first frame goes out at the throttle's slot as the turn starts; off, none", async () => {
    for (const frameAtStart of [true, false]) {
      const clock = new ManualClock();
      const { s, calls } = surface();
      const r = renderer(s, clock, { frameAtStart });
      await r.onTurnStart();
      // At the slot, not at once: a quick answer is not preceded by a placeholder the same instant.
      expect(calls).toEqual([]);
      await clock.advance(100);
      expect(calls.map((c) => [c.op, c.message.body])).toEqual(
        frameAtStart ? [["post", "_💭 Thinking…_"]] : [],
      );
      await r.close();
    }
  });

  it("expiring: an unchanged frame is written anyway; without it the unchanged frame is skipped", async () => {
    for (const due of [true, false]) {
      const clock = new ManualClock();
      const { s, calls } = surface(() => due);
      const r = renderer(s, clock);
      await r.onTextChunk("Working on it.");
      await clock.advance(100);
      // Nothing new since: a renewal asks for a frame (the surface's timer, through its renderer).
      r.renew();
      await clock.advance(100);
      expect(calls.map((c) => c.op)).toEqual(due ? ["post", "edit"] : ["post"]);
      if (due) expect(calls[1]?.message).toMatchObject({ body: calls[0]?.message.body, live: true });
      await r.close();
    }
  });
});
