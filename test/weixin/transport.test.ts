/**
 * The transport alone: deny by default, errors in 200 bodies are failures, every call carries the
 * headers iLink asks for, sends to one peer are paced, and a send without a context token is
 * refused before anything leaves.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { failureCode, IlinkClient, randomUin } from "../../src/weixin/client.js";
import { IlinkApiError } from "../../src/weixin/errors.js";
import { PeerState } from "../../src/weixin/peers.js";
import { PeerPolicy } from "../../src/weixin/policy.js";
import { WeixinTransport } from "../../src/weixin/transport.js";
import { FakeIlink } from "../fakes/weixin/server.js";
import { testDrops } from "../helpers/drops.js";
import { ManualClock, settle } from "../helpers/manual-clock.js";

let fake: FakeIlink | undefined;
afterEach(async () => {
  expect(fake?.authFailures ?? 0).toBe(0);
  await fake?.stop();
  fake = undefined;
});

const PEER = "peer0001@im.wechat";

describe("the iLink client", () => {
  it("reads failure codes from 200 bodies: errcode first, then ret", () => {
    expect(failureCode({ ret: 0 })).toBe(0);
    expect(failureCode({})).toBe(0);
    expect(failureCode({ ret: -2 })).toBe(-2);
    expect(failureCode({ ret: 0, errcode: -14 })).toBe(-14);
    expect(failureCode({ ret: -1, errcode: 0 })).toBe(-1);
  });

  it("X-WECHAT-UIN is base64 of a uint32 in decimal", () => {
    const uin = randomUin(() => Buffer.from([0xff, 0xff, 0xff, 0xff]));
    expect(Buffer.from(uin, "base64").toString("utf8")).toBe("4294967295");
  });

  it("a nonzero ret in a 200 body is an IlinkApiError; the fake saw the headers iLink asks for", async () => {
    fake = await FakeIlink.start();
    const client = new IlinkClient({ origin: fake.origin, token: fake.token });
    fake.inject("getconfig", 40013);
    await expect(client.getConfig(PEER, undefined)).rejects.toMatchObject({
      code: 40013,
      name: "IlinkApiError",
    });
    const answer = await client.getConfig(PEER, undefined);
    expect(answer.typing_ticket).toBe(`ticket-${PEER}`);
    expect(fake.callsTo("getconfig").every((c) => c.headers.authorizationType === "ilink_bot_token")).toBe(
      true,
    );
    expect(fake.callsTo("getconfig")[0]?.body?.base_info).toMatchObject({ bot_agent: "parley" });
  });

  it("a wrong token is refused by the fake in its 200 body", async () => {
    fake = await FakeIlink.start();
    const client = new IlinkClient({ origin: fake.origin, token: "wrong-token-000000" });
    await expect(client.getConfig(PEER, undefined)).rejects.toBeInstanceOf(IlinkApiError);
    expect(fake.authFailures).toBe(1);
    fake.authFailures = 0;
  });
});

describe("the transport", () => {
  it("an unconfigured transport authorizes nobody and sends nothing", async () => {
    const audit = new MemoryAuditSink();
    const t = new WeixinTransport({ drops: testDrops(audit, "weixin"), audit });
    const outcome = await t.receive({
      message_id: 1,
      from_user_id: PEER,
      message_type: 1,
      item_list: [{ type: 1, text_item: { text: "hi" } }],
    });
    expect(outcome.status).toBe("denied");
    await expect(t.sendMessage(PEER, "x")).rejects.toThrow();
  });

  it("sends to one peer are paced by the gap; another peer is not held up", async () => {
    fake = await FakeIlink.start();
    const clock = new ManualClock(Date.now());
    const logger = new MemoryLogger();
    const peers = new PeerState({ logger });
    await peers.rememberToken(PEER, fake.push(PEER, "a").contextToken);
    await peers.rememberToken("other1@im.wechat", fake.push("other1@im.wechat", "b").contextToken);
    const t = new WeixinTransport({
      drops: testDrops(new MemoryAuditSink(), "weixin"),
      audit: new MemoryAuditSink(),
      client: new IlinkClient({ origin: fake.origin, token: fake.token }),
      policy: new PeerPolicy({ dmPolicy: "open", allowedUserIds: [] }),
      peers,
      timers: clock,
      logger,
      sendGapMs: 1000,
    });
    const first = t.postMarkdown(PEER, "one");
    const second = t.postMarkdown(PEER, "two");
    await first;
    await t.postMarkdown("other1@im.wechat", "elsewhere");
    await new Promise((r) => setTimeout(r, 100));
    await settle();
    expect(fake.visible()).toEqual(["one", "elsewhere"]);
    await clock.advance(1000);
    await second;
    expect(fake.visible()).toEqual(["one", "elsewhere", "two"]);
  });
});
