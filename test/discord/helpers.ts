/**
 * The Discord stack against the loopback fake: the real @discordjs/rest + @discordjs/ws clients,
 * the real transport/dispatcher/renderer, the shared turn pipeline, and a ScriptedProvider as the
 * agent. Only the network boundary is fake.
 */
import { vi } from "vitest";
import type { DiscordSettings } from "../../src/discord/index.js";
import { discordChannel } from "../../src/discord/index.js";
import type { DiscordStartOverrides, RunningDiscord } from "../../src/discord/start.js";
import { start as startDiscord } from "../../src/discord/start.js";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { TurnSink } from "../../src/messaging/channel/turn-sink.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { SessionStore } from "../../src/messaging/session/session-store.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type {
  ScriptedProvider,
  ScriptedProviderOptions,
  ScriptedTurn,
  ScriptStep,
} from "../../src/providers/scripted.js";
import { FakeDiscord } from "../fakes/discord/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";
import { oneAgentForEverySession, tempHome } from "../helpers/channel-under-test.js";
import { ManualClock } from "../helpers/manual-clock.js";

export const ALICE = "200000000000000001";
export const MALLORY = "200000000000000666";
export const DM = "300000000000000001";
export const GUILD = "400000000000000001";

export interface Stack {
  fake: FakeDiscord;
  running: RunningDiscord;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  provider: ScriptedProvider;
  sessions: SessionManager<PipelineProvider>;
  /** Every session key an agent was started for, in order. */
  startedKeys: string[];
  home: string;
  store: SessionStore;
  /** The real store in `home` (journal, ledger, history, resume records). */
  parley: ParleyStore;
  /** What the channel reported as not turned into a message, per reason. */
  dropLedger: InboundDropLedger;
  close(): Promise<void>;
}

export async function startStack(o: {
  turns?: (ScriptedTurn | ScriptStep[])[];
  provider?: ScriptedProviderOptions;
  discord?: Record<string, unknown>;
  overrides?: DiscordStartOverrides & { clock?: Clock };
  fake?: FakeDiscord;
  grant?: GrantControl;
  /** A durable session store (enables links and `!sessions`). */
  store?: SessionStore;
  home?: string;
  /** Channel-server mode: authorized messages go to this sink. */
  sink?: TurnSink;
}): Promise<Stack> {
  const fake = o.fake ?? (await new FakeDiscord().start());
  fake.addChannel({ id: DM, type: 1 });
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const { provider, startedKeys, sessions } = oneAgentForEverySession(o);
  const home = o.home ?? tempHome("discord");
  const { clock, ...overrides } = o.overrides ?? {};
  const parley = await openTestStore(home, clock ? { now: () => clock.now() } : {});
  const ctx = testChannelContext<DiscordSettings>(discordChannel, {
    parley,
    section: { allowedUserIds: [ALICE], apiBase: fake.apiBase, ...o.discord },
    env: { DISCORD_BOT_TOKEN: fake.token },
    home,
    logger,
    audit,
    sessions,
    ...(o.store ? { store: o.store } : {}),
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
    ...(o.sink ? { sink: o.sink } : {}),
  });
  const running = await startDiscord(ctx, { throttleMs: 0, ...overrides });
  await running.registration;
  return {
    fake,
    running,
    audit,
    logger,
    provider,
    sessions,
    startedKeys,
    home,
    store: ctx.store,
    parley,
    dropLedger: ctx.dropLedger,
    async close() {
      await running.stop();
      await parley.close();
      await fake.close();
      // Every stack, every test: no outbound message payload may lack the mention guard.
      const bare = mentionGuardViolations(fake);
      if (bare.length > 0)
        throw new Error(`payloads without allowed_mentions {parse: []}: ${bare.join(", ")}`);
    },
  };
}

const MESSAGE_ROUTES = /^\/channels\/\d+\/messages(\/\d+)?$|^\/interactions\/|^\/webhooks\//;

/** "METHOD path" of every message-carrying request whose body lacks allowed_mentions {parse: []}. */
export function mentionGuardViolations(fake: FakeDiscord): string[] {
  const out: string[] = [];
  for (const call of fake.calls) {
    if (call.method === "GET" || call.method === "DELETE" || !MESSAGE_ROUTES.test(call.path)) continue;
    const body = call.body as { allowed_mentions?: unknown; data?: { allowed_mentions?: unknown } } | null;
    const guard = call.path.startsWith("/interactions/")
      ? body?.data?.allowed_mentions
      : body?.allowed_mentions;
    if (JSON.stringify(guard) !== JSON.stringify({ parse: [] })) out.push(`${call.method} ${call.path}`);
  }
  return out;
}

/** Wait (bounded) until the DM shows the turn-status footer: the turn finished rendering. */
export async function untilFooter(fake: FakeDiscord, channelId: string, count = 1): Promise<void> {
  await vi.waitFor(
    () => {
      const n = fake.channelMessages(channelId).filter((m) => m.content.includes("-# Finished in")).length;
      if (n < count) throw new Error(`footers: ${n}`);
    },
    { timeout: 10_000, interval: 10 },
  );
}

/** Fence delimiters on their own line, per chunk: an even count means the chunk is balanced. */
export function fenceLines(text: string): number {
  return text.split("\n").filter((l) => /^ {0,3}(`{3,}|~{3,})/.test(l)).length;
}

/** Deterministic timers whose advance fires synchronously (no settling between timers). */
export class FakeTimers extends ManualClock {
  advanceSync(ms: number): void {
    const end = this.t + ms;
    while (this.fireNext(end));
    this.t = end;
  }
}

/** The buttons on a posted message, in order. */
export function buttons(m: { components?: unknown } | undefined): { custom_id: string; label: string }[] {
  const rows = (m?.components ?? []) as { components: { custom_id: string; label: string }[] }[];
  return rows.flatMap((r) => r.components);
}
