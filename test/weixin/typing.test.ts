/**
 * "typing…": one getconfig ticket per peer (cached), status 1 refreshed while the turn runs, 2 at the
 * end; a failure is ignored.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { IlinkClient } from "../../src/weixin/client.js";
import { PeerState } from "../../src/weixin/peers.js";
import { Typing } from "../../src/weixin/typing.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { ManualClock } from "../helpers/manual-clock.js";

let fake: FakeIlink | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

const PEER = "typist01@im.wechat";

describe("weixin typing", () => {
  it("caches the ticket, refreshes status 1, ends with 2", async () => {
    fake = await FakeIlink.start();
    const f = fake;
    const clock = new ManualClock(Date.now());
    const logger = new MemoryLogger();
    const peers = new PeerState({ logger });
    await peers.rememberToken(PEER, f.push(PEER, "hi").contextToken);
    const typing = new Typing({
      client: new IlinkClient({ origin: f.origin, token: f.token }),
      peers,
      timers: clock,
      logger,
      refreshMs: 5000,
    });
    typing.start(PEER);
    typing.start(PEER);
    await f.waitFor(() => f.typing.length === 1, 5000, "status 1");
    await clock.advance(5000);
    await f.waitFor(() => f.typing.length === 2, 5000, "the refresh");
    typing.stop(PEER);
    await f.waitFor(() => f.typing.length === 3, 5000, "status 2");
    expect(f.typing.map((t) => t.status)).toEqual([1, 1, 2]);
    expect(f.callsTo("getconfig")).toHaveLength(1);
    expect(f.callsTo("getconfig")[0]?.body?.context_token).toBe(peers.contextToken(PEER));
    await clock.advance(20_000);
    expect(f.typing).toHaveLength(3);
  });
});
