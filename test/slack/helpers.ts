/**
 * The Slack stack against the loopback fake: the real @slack/bolt (Socket Mode or the Events API
 * over HTTP) and @slack/web-api pointed at it, the real transport, hub, renderer and store, and a
 * ScriptedProvider as the agent. Only the network boundary is fake.
 */
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { TitleGenerator } from "../../src/messaging/session/auto-title.js";
import type { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type {
  ScriptedProvider,
  ScriptedProviderOptions,
  ScriptedTurn,
  ScriptStep,
} from "../../src/providers/scripted.js";
import type { SlackSettings } from "../../src/slack/index.js";
import { slackChannel } from "../../src/slack/index.js";
import type { RunningSlack, SlackStartOverrides } from "../../src/slack/start.js";
import { start as startSlack } from "../../src/slack/start.js";
import type { FakeMessage } from "../fakes/slack/server.js";
import { buttonsOf, FakeSlack } from "../fakes/slack/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";
import { oneAgentForEverySession, tempHome, until } from "../helpers/channel-under-test.js";

export { done, text, until } from "../helpers/channel-under-test.js";

export const ALICE = "U0000000001";
export const BOB = "U0000000002";
export const MALLORY = "U0000000666";
export const DM = "D0000000001";
export const BOB_DM = "D0000000002";
export const CHANNEL = "C0000000001";
export const OTHER_CHANNEL = "C0000000009";

export type Mode = "socket" | "http";

export interface Stack {
  fake: FakeSlack;
  running: RunningSlack;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  provider: ScriptedProvider;
  sessions: SessionManager<PipelineProvider>;
  /** Every session key an agent was started for, in order. */
  startedKeys: string[];
  home: string;
  parley: ParleyStore;
  /** What the channel reported as not turned into a message, per reason. */
  dropLedger: InboundDropLedger;
  close(): Promise<void>;
}

export interface StackOptions {
  mode?: Mode;
  turns?: (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
  slack?: Record<string, unknown>;
  overrides?: SlackStartOverrides;
  clock?: Clock;
  fake?: FakeSlack;
  grant?: GrantControl;
  /** Auto-titles: absent, conversations are not named. */
  titles?: TitleGenerator;
  home?: string;
  parley?: ParleyStore;
  env?: Record<string, string>;
}

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const mode = o.mode ?? "socket";
  const fake = o.fake ?? (await new FakeSlack().start());
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const { provider, startedKeys, sessions } = oneAgentForEverySession(o);
  const home = o.home ?? tempHome("slack");
  const parley =
    o.parley ?? (await openTestStore(home, o.clock ? { now: () => (o.clock as Clock).now() } : {}));
  const ctx = testChannelContext<SlackSettings>(slackChannel, {
    parley,
    section: {
      mode,
      apiUrl: fake.apiUrl,
      listen: "127.0.0.1:0",
      allowedUserIds: [ALICE, BOB],
      owner: ALICE,
      allowedChannelIds: [CHANNEL],
      ...o.slack,
    },
    env: {
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_APP_TOKEN: fake.appToken,
      SLACK_SIGNING_SECRET: fake.signingSecret,
      ...o.env,
    },
    home,
    logger,
    audit,
    sessions,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.titles ? { titles: o.titles } : {}),
  });
  const running = await startSlack(ctx, {
    throttleMs: 0,
    retry: { retries: 2, minTimeout: 10, maxTimeout: 50 },
    reconnect: { baseMs: 20, maxMs: 200, minHealthyMs: 60_000 },
    ...o.overrides,
  });
  if (mode === "http") {
    const at = running.receiver.address();
    fake.delivery.mode = "http";
    fake.delivery.target = `http://127.0.0.1:${at?.port}/slack/events`;
  }
  return {
    fake,
    running,
    audit,
    logger,
    provider,
    sessions,
    startedKeys,
    home,
    parley,
    dropLedger: ctx.dropLedger,
    async close() {
      await running.stop();
      if (!o.parley) await parley.close();
      if (!o.fake) await fake.close();
    },
  };
}

/** Every turn has ended and released its session, and the fake heard nothing more for `quietMs`. */
export async function settled(s: Stack, quietMs = 80): Promise<void> {
  await until(() => s.startedKeys.every((k) => !s.sessions.isBusy(k)), "every turn released");
  let seen = -1;
  while (seen !== s.fake.calls.length) {
    seen = s.fake.calls.length;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

/** Everything a user reads in a thread, in order (body, labels, tasks), plus the thread status. */
export function shown(fake: FakeSlack, channel: string, threadTs?: string, viewer = ALICE): string[] {
  const status = threadTs ? fake.status.get(threadTs) : undefined;
  return [
    ...fake
      .thread(channel, threadTs, viewer)
      .filter((m) => m.bot)
      .flatMap((m) => fake.visibleParts(m)),
    ...(status ? [status] : []),
  ];
}

/** Wait for the turn-status footer to show `count` times in a conversation: the turn finished rendering. */
export async function untilFooter(fake: FakeSlack, channel: string, count = 1): Promise<void> {
  await until(
    () => fake.botMessages(channel).filter((m) => fake.visible(m).includes("Finished in")).length >= count,
    `${count} footer(s)`,
  );
}

/** Fence delimiters on their own line: an even count means the text is balanced. */
export function fenceLines(text: string): number {
  return text.split("\n").filter((l) => /^ {0,3}(`{3,}|~{3,})/.test(l)).length;
}

export function buttonIds(m: FakeMessage | undefined): string[] {
  return m ? buttonsOf(m).map((b) => b.actionId) : [];
}
