/**
 * Test wiring for WeCom: the real client against the loopback fake, and a renderer on a real
 * message's req_id (so the fake routes its frames), with what reached the wire read back.
 */
import { vi } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { TurnParts } from "../../src/messaging/channel/delivery.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { WeComClient } from "../../src/wecom/client.js";
import { OriginPolicy } from "../../src/wecom/origins.js";
import type { WeComAddress } from "../../src/wecom/outbox.js";
import { Outbox } from "../../src/wecom/outbox.js";
import type { WeComRendererOptions } from "../../src/wecom/renderer.js";
import { WeComRenderer } from "../../src/wecom/renderer.js";
import { ResponseUrl } from "../../src/wecom/response-url.js";
import type { CallbackSpec } from "../fakes/wecom/server.js";
import { FakeWeCom } from "../fakes/wecom/server.js";
import type { testDrops as TestDrops } from "../helpers/drops.js";
import { testDrops } from "../helpers/drops.js";

export const USER = "zhangsan";

export interface Wired {
  fake: FakeWeCom;
  client: WeComClient;
  clock: Clock;
  logger: MemoryLogger;
  audit: MemoryAuditSink;
  /** The client's inbound drops (its `.ledger` for the counts). */
  drops: ReturnType<typeof TestDrops>;
  /** A message from the user; its address (req_id, response_url). */
  message(spec?: CallbackSpec): WeComAddress;
  renderer(address: WeComAddress, o?: Partial<WeComRendererOptions>): WeComRenderer;
  close(): Promise<void>;
}

/**
 * `ackTimeoutMs`: on a manual clock, advancing past the bound would time out an answer that is still
 * crossing the real socket, so clock-driven tests set it far beyond the time they advance.
 */
export async function wire(
  o: { clock?: Clock; fake?: FakeWeCom; ackTimeoutMs?: number } = {},
): Promise<Wired> {
  const clock: Clock = o.clock ?? {
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  const fake = o.fake ?? (await FakeWeCom.start({ now: () => clock.now() }));
  const logger = new MemoryLogger();
  const audit = new MemoryAuditSink();
  const drops = testDrops(audit, "wecom");
  const client = new WeComClient({
    url: fake.wsUrl,
    botId: fake.botId,
    secret: fake.secret,
    clock,
    logger,
    drops,
    onCallback: () => {},
    ...(o.ackTimeoutMs ? { ackTimeoutMs: o.ackTimeoutMs } : {}),
  });
  client.start();
  await vi.waitFor(() => {
    if (client.health.state !== "healthy") throw new Error("not subscribed yet");
  });
  const responseUrl = new ResponseUrl({ origins: new OriginPolicy([fake.origin]), timers: clock, logger });
  return {
    fake,
    client,
    clock,
    logger,
    audit,
    drops,
    message(spec = {}) {
      const userid = spec.userid ?? USER;
      const sent = fake.callback({ ...spec, userid });
      const body = fake.lastCallbackBody();
      return {
        userid,
        reqId: sent.reqId,
        ...(typeof body.response_url === "string" ? { responseUrl: body.response_url } : {}),
      };
    },
    renderer(address, r = {}) {
      const parts = r.parts ?? TurnParts.unrecorded();
      let n = 0;
      const outbox = new Outbox({
        wire: client,
        responseUrl,
        address,
        logger,
        parts,
        streamId: () => `notice-${++n}`,
      });
      return new WeComRenderer({
        wire: client,
        outbox,
        address,
        clock,
        logger,
        audit,
        parts,
        throttleMs: 0,
        ...r,
      });
    },
    async close() {
      await client.close();
      if (!o.fake) await fake.stop();
    },
  };
}

/** Every text that reached the wire: frame contents, push and response_url bodies. */
export function wireTexts(fake: FakeWeCom): string[] {
  return [
    ...fake.frames
      .filter((f) => f.cmd === "aibot_respond_msg")
      .map((f) => String(((f.body?.stream ?? {}) as { content?: unknown }).content ?? "")),
    ...fake.pushes.map((p) => p.content),
    ...fake.posts.map((p) => p.content),
  ];
}

/** True when no fence is left open (a line opening a fence is matched by one closing it). */
export function fencesBalanced(text: string): boolean {
  let open: string | null = null;
  for (const line of text.split("\n")) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (!m) continue;
    const run = m[1] as string;
    if (open === null) open = run;
    else if (run[0] === open[0] && run.length >= open.length && line.trim() === run) open = null;
  }
  return open === null;
}
