/**
 * The watch feed alone, over a scripted imsg: a row the journal could not take makes the feed
 * resubscribe from the cursor, and the subscription still running is unsubscribed first (imsg's
 * subscriptions run until `watch.unsubscribe`, steipete/imsg Sources/imsg/RPCServer+Handlers.swift);
 * an `error` notification ends the subscription on imsg's side, so none is unsubscribed then.
 */
import { describe, expect, it } from "vitest";
import type { ImsgCalls } from "../../src/imessage/transport.js";
import { WatchFeed } from "../../src/imessage/watch.js";
import type { ImsgMessage } from "../../src/imessage/wire.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { waitFor } from "../fakes/imsg/control.js";
import { testDrops } from "../helpers/drops.js";

function scripted() {
  const calls: [string, Record<string, unknown> | undefined][] = [];
  let nextSub = 0;
  const imsg: ImsgCalls = {
    request: async (method, params) => {
      calls.push([method, params]);
      if (method === "watch.subscribe") return { subscription: ++nextSub };
      return { ok: true };
    },
  };
  return { imsg, calls };
}

const row = (subscription: number, id: number) => ({
  subscription,
  message: {
    id,
    guid: `G-${id}`,
    sender: "+15550001111",
    is_from_me: false,
    text: `t${id}`,
    is_group: false,
  },
});

describe("the watch feed", () => {
  it("after a row the journal refused, unsubscribes the running watch and resubscribes from the cursor", async () => {
    const { imsg, calls } = scripted();
    let refuse = 1;
    const handled: number[] = [];
    const feed = new WatchFeed({
      imsg,
      clock: realClock,
      logger: new MemoryLogger(),
      drops: testDrops(new MemoryAuditSink(), "imessage"),
      resubscribeFirstMs: 10,
      handle: async (r: ImsgMessage) => {
        if (r.rowid === 11 && refuse-- > 0) throw new Error("journal full");
        handled.push(r.rowid);
      },
    });
    await feed.subscribe(9);
    feed.onNotification("message", row(1, 10));
    feed.onNotification("message", row(1, 11));
    await waitFor(() => calls.length === 3, "the resubscription");
    expect(calls).toEqual([
      ["watch.subscribe", { since_rowid: 9, attachments: false }],
      ["watch.unsubscribe", { subscription: 1 }],
      ["watch.subscribe", { since_rowid: 10, attachments: false }],
    ]);
    feed.onNotification("message", row(2, 11));
    await feed.idle();
    expect(handled).toEqual([10, 11]);
    expect(feed.cursor).toBe(11);
    feed.stop();
  });

  it("after an error notification resubscribes from the cursor without unsubscribing the ended watch", async () => {
    const { imsg, calls } = scripted();
    const feed = new WatchFeed({
      imsg,
      clock: realClock,
      logger: new MemoryLogger(),
      drops: testDrops(new MemoryAuditSink(), "imessage"),
      resubscribeFirstMs: 10,
      handle: async () => {},
    });
    await feed.subscribe(undefined);
    feed.onNotification("message", row(1, 20));
    feed.onNotification("error", { subscription: 1, error: { message: "database is locked" } });
    await waitFor(() => calls.length === 2, "the resubscription");
    expect(calls).toEqual([
      ["watch.subscribe", { attachments: false }],
      ["watch.subscribe", { since_rowid: 20, attachments: false }],
    ]);
    feed.stop();
  });
});
