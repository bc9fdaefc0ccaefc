/** A real Gateway in this process (real channels, the demo or a fake ACP agent), and HTTP against it. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelEntry, Env } from "../../src/messaging/channel/contract.js";
import { type Family, parseExposition } from "./prometheus-text.js";

export interface StartedGateway {
  gateway: Gateway;
  /** The web chat's address with its token, as announced. */
  url: string;
  /** http://host:port of the web chat's server. */
  base: string;
  home: string;
  logger: MemoryLogger;
}

export function freshHome(prefix = "parley-ops-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startGateway(o: {
  raw: Record<string, unknown>;
  channels: readonly ChannelEntry[];
  env?: Env;
  clock?: Clock;
  home?: string;
}): Promise<StartedGateway> {
  const home = o.home ?? freshHome();
  const logger = new MemoryLogger();
  let url = "";
  const gateway = await Gateway.start({
    config: parseConfig({ webchat: { port: 0 }, ...o.raw }, o.env ?? {}, o.channels),
    env: { DEMO_AGENT_SPEED: "0", ...o.env },
    home,
    logger,
    announce: (line) => {
      const m = /http:\/\/\S+\?token=\S+/.exec(line);
      if (m) url = m[0];
    },
    channels: o.channels,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const base = url ? new URL(url).origin : "";
  return { gateway, url, base, home, logger };
}

export async function get(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; type: string }> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") ?? "" };
}

/** /metrics, parsed strictly (it throws on anything outside the text format). */
export async function scrape(
  base: string,
  headers: Record<string, string> = {},
): Promise<Map<string, Family>> {
  const res = await get(base, "/metrics", headers);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.text}`);
  return parseExposition(res.text);
}
