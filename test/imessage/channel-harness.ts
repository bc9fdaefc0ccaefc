/**
 * Starts the whole iMessage channel (start()) against the fake imsg executable with scripted agents
 * and the real store: the gateway's wiring, the real child process and framing, only imsg faked.
 * The platform probe is the one test seam (this runs on Linux).
 */
import { afterEach } from "vitest";
import { ImsgClient } from "../../src/imessage/client.js";
import type { IMessageSettings } from "../../src/imessage/index.js";
import { imessageChannel } from "../../src/imessage/index.js";
import type { PlatformProbe } from "../../src/imessage/platform.js";
import type { IMessageStartOverrides, RunningIMessage } from "../../src/imessage/start.js";
import { start as startIMessage } from "../../src/imessage/start.js";
import { realClock } from "../../src/messaging/base/clock.js";
import type { Logger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import { FakeImsgFolder, type FakeScenario, waitFor } from "../fakes/imsg/control.js";
import { testChannelContext } from "../helpers/channel-context.js";
import type { ScriptedAgentOptions, StartedChannel } from "../helpers/channel-under-test.js";
import { channelMachinery, scriptedAgent, startedChannel, tempHome } from "../helpers/channel-under-test.js";

export { done, text } from "../helpers/channel-under-test.js";

export const OWNER = "+61400000000";
export const GUEST = "guest@example.com";
export const STRANGER = "+15551234567";

/** A Mac that passes the platform check (the production probe refuses Linux). */
export const macHost: PlatformProbe = async (dbPath) => ({
  supported: true,
  os: "macOS 14",
  dbPath: dbPath ?? "/Users/op/Library/Messages/chat.db",
  dbReadable: true,
});

/** The real imsg client over the fake folder's executable, not started yet; it ignores notifications. */
export function imsgClientOn(folder: FakeImsgFolder, logger: Logger): ImsgClient {
  return new ImsgClient({
    cliPath: folder.cliPath,
    dbPath: folder.dbPath,
    clock: realClock,
    logger,
    onNotification: () => {},
    onStarted: async () => {},
  });
}

export interface ChannelUnderTest extends StartedChannel<RunningIMessage> {
  /** The drop ledger the channel reports to (counts per reason). */
  drops: InboundDropLedger;
}

export interface ChannelOptions extends ScriptedAgentOptions {
  section?: Record<string, unknown>;
  home?: string;
  overrides?: IMessageStartOverrides;
  grant?: GrantControl;
  queueMode?: "steer" | "queue";
}

export async function startChannel(
  folder: FakeImsgFolder,
  o: ChannelOptions = {},
): Promise<ChannelUnderTest> {
  const home = o.home ?? tempHome("imessage");
  const machinery = await channelMachinery({ home, agentFor: (key) => scriptedAgent(key, o) });
  const ctx = testChannelContext<IMessageSettings>(imessageChannel, {
    ...machinery,
    section: { allowedHandles: ["+61 400 000 000", "Guest@Example.com"], ...o.section },
    env: { IMESSAGE_CLI_PATH: folder.cliPath, IMESSAGE_DB_PATH: folder.dbPath },
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.queueMode ? { queueMode: o.queueMode } : {}),
  });
  const running = await startIMessage(ctx, {
    platform: macHost,
    restartFirstMs: 100,
    resubscribeFirstMs: 50,
    sendPolicy: { firstBackoffMs: 100, maxBackoffMs: 400 },
    ...o.overrides,
  });
  return { ...startedChannel(machinery, running), drops: ctx.dropLedger };
}

/** One fake folder per test, the channels started against it stopped afterwards. Call at module level. */
export function imsgLab(scenario: FakeScenario = {}): {
  folder(patch?: FakeScenario): FakeImsgFolder;
  channel(o?: ChannelOptions, folder?: FakeImsgFolder): Promise<ChannelUnderTest>;
} {
  const started: ChannelUnderTest[] = [];
  let current: FakeImsgFolder | undefined;
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    current = undefined;
  });
  const folder = (patch: FakeScenario = {}) => {
    current ??= new FakeImsgFolder({ ...scenario, ...patch });
    return current;
  };
  return {
    folder,
    async channel(o = {}, f = folder()) {
      const c = await startChannel(f, o);
      started.push(c);
      await waitFor(
        () => f.requests().some((r) => r.method === "watch.subscribe" && r.answered !== undefined),
        "subscribed",
      );
      return c;
    },
  };
}

/** The answers a handle received that end a turn (the status line follows the answer). */
export function sentTo(folder: FakeImsgFolder, handle: string): string[] {
  return folder.sent(handle);
}

/** Until the channel's watch has settled every row the fake's database holds. */
export async function caughtUp(c: ChannelUnderTest, folder: FakeImsgFolder): Promise<void> {
  await waitFor(() => (c.running.feed.cursor ?? 0) >= folder.lastRowid(), "the watch caught up");
  await c.running.feed.idle();
}

/** Every prompt the channel's agents were given, as text, in order. */
export function promptsOf(c: ChannelUnderTest): string[] {
  return [...c.providers.values()].flatMap((p) =>
    p.prompts.map((q) => (typeof q === "string" ? q : q.map((b) => ("text" in b ? b.text : "")).join(""))),
  );
}
