/**
 * Starts the whole WhatsApp channel (its start()) against the fake with scripted agents, in a data
 * home holding a linked device's keys: the gateway's wiring, only the socket faked (at the WaSocket
 * port, see test/fakes/whatsapp/socket.ts).
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuthenticationState } from "@whiskeysockets/baileys";
import { afterEach, beforeEach } from "vitest";
import type { Clock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { AgentPromptCapabilities } from "../../src/messaging/files/prompt-blocks.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";
import { SentIds } from "../../src/whatsapp/echo.js";
import { operatorOf } from "../../src/whatsapp/identity.js";
import type { WhatsAppSettings } from "../../src/whatsapp/index.js";
import { whatsappChannel } from "../../src/whatsapp/index.js";
import { admissionOf } from "../../src/whatsapp/policy.js";
import type { RunningWhatsApp, WhatsAppStartOverrides } from "../../src/whatsapp/start.js";
import { start as startWhatsApp } from "../../src/whatsapp/start.js";
import { WhatsAppTransport } from "../../src/whatsapp/transport.js";
import type { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { FakeWhatsApp as Fake } from "../fakes/whatsapp/server.js";
import { openTestStore, testChannelContext } from "../helpers/channel-context.js";

/** The operator's phone number, a guest the operator admits, and a stranger. */
export const OPERATOR = "+4917000000001";
export const GUEST = "+4917000000002";
export const GUEST_JID = "4917000000002@s.whatsapp.net";
export const GUEST_LID = "80000000002@lid";
export const STRANGER_JID = "4917000000099@s.whatsapp.net";
export const GROUP = "120363000000000001@g.us";

export const text = (t: string): ScriptStep => ({ type: "text", text: t });
export const done: ScriptStep = { type: "complete", stopReason: "end_turn" };

/** A data home whose keys are linked to the fake's operator (what `parley whatsapp link` leaves). */
export async function linkedHome(fake: FakeWhatsApp, home = mkdtempSync(join(tmpdir(), "parley-wa-"))) {
  const auth = await openAuthState(home);
  auth.state.creds.me = {
    id: `${fake.operator.pn.split("@")[0]}:12@s.whatsapp.net`,
    lid: fake.operator.lid,
    name: "Operator",
  };
  auth.state.creds.registered = true;
  await auth.saveCreds();
  return home;
}

export interface ChannelUnderTest {
  running: RunningWhatsApp;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  sessions: SessionManager<PipelineProvider>;
  providers: Map<string, ScriptedProvider>;
  home: string;
  parley: ParleyStore;
  stop(): Promise<void>;
  /** Stops taking messages and drops the connection without settling anything: a killed process. */
  crash(): Promise<void>;
}

export interface ChannelOptions {
  whatsapp?: Record<string, unknown>;
  turns?: (key: string) => (ScriptedTurn | ScriptStep[])[];
  supportsSteer?: boolean;
  provider?: ScriptedProviderOptions;
  home?: string;
  overrides?: WhatsAppStartOverrides & { clock?: Clock };
  grant?: GrantControl;
  queueMode?: "steer" | "queue";
  staleAfterMs?: number;
  promptCapabilities?: AgentPromptCapabilities;
}

export async function startChannel(fake: FakeWhatsApp, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? (await linkedHome(fake));
  const audit = new MemoryAuditSink();
  const logger = new MemoryLogger();
  const providers = new Map<string, ScriptedProvider>();
  const sessions = new SessionManager<PipelineProvider>({
    logger,
    audit,
    createProvider: (key) => {
      const p = new ScriptedProvider(o.turns?.(key) ?? [], {
        ...o.provider,
        supportsSteer: o.supportsSteer ?? false,
      });
      if (o.promptCapabilities) Object.assign(p, { promptCapabilities: o.promptCapabilities });
      providers.set(key, p);
      return p;
    },
  });
  const { clock, ...overrides } = o.overrides ?? {};
  const parley = await openTestStore(home, clock ? { now: () => clock.now() } : {});
  const ctx = testChannelContext<WhatsAppSettings>(whatsappChannel, {
    parley,
    section: { webSocketUrl: fake.webSocketUrl, ...o.whatsapp },
    home,
    logger,
    audit,
    sessions,
    queueMode: o.queueMode ?? "steer",
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
  });
  const running = await startWhatsApp(ctx, {
    createSocket: fake.createSocket,
    renderer: { editIntervalMs: 0, firstFrameMs: 0 },
    ...overrides,
  });
  let stopped = false;
  let crashed = false;
  return {
    running,
    audit,
    logger,
    sessions,
    providers,
    home,
    parley,
    async stop() {
      if (stopped) return;
      stopped = true;
      // A crashed channel's turns are abandoned, never settled: only its agents and store close.
      if (!crashed) await running.stop();
      await sessions.closeAll();
      await parley.close();
    },
    async crash() {
      crashed = true;
      await running.intake.close();
      await running.connection.stop();
    },
  };
}

/** One fake per test and the channels started against it, stopped afterwards. Call at module level. */
export function fakeWhatsAppLab(options: { now?: () => number } = {}): {
  readonly fake: FakeWhatsApp;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  let current: FakeWhatsApp | undefined;
  const started: ChannelUnderTest[] = [];
  beforeEach(async () => {
    current = await Fake.start({ lifetimeMs: 30_000, ...(options.now ? { now: options.now } : {}) });
    current.groups.add(GROUP);
  });
  afterEach(async () => {
    for (const c of started.splice(0)) await c.stop();
    await current?.stop();
    current = undefined;
  });
  return {
    get fake(): FakeWhatsApp {
      if (!current) throw new Error("the fake runs only inside a test");
      return current;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      const c = await startChannel(this.fake, o);
      started.push(c);
      return c;
    },
  };
}

/** The operator typing in their self-chat (on their phone). */
export function selfChat(fake: FakeWhatsApp, textOrSpec: string | Record<string, unknown>) {
  const spec = typeof textOrSpec === "string" ? { text: textOrSpec } : textOrSpec;
  return fake.receive({ chat: fake.operator.pn, fromMe: true, ...spec });
}

/** Wait until the channel is connected (its first socket open). */
export function connected(c: ChannelUnderTest, fake: FakeWhatsApp): Promise<void> {
  return fake.waitFor(() => c.running.connection.state === "open", 5000, "the connection");
}

/** The transport alone on one of the fake's sockets (no hub): what renderer tests drive. */
export async function openTransport(fake: FakeWhatsApp, audit: AuditSink = new MemoryAuditSink()) {
  const home = mkdtempSync(join(tmpdir(), "parley-wa-transport-"));
  mkdirSync(join(home, "whatsapp"), { mode: 0o700 });
  const sent = SentIds.open(home);
  const me = { id: `${fake.operator.pn.split("@")[0]}:12@s.whatsapp.net`, lid: fake.operator.lid };
  const sock = fake.createSocket({ creds: { me }, keys: {} } as unknown as AuthenticationState);
  await new Promise<void>((resolve) =>
    sock.ev.on("connection.update", (u) => {
      if (u.connection === "open") resolve();
    }),
  );
  const operator = operatorOf(me);
  const transport = new WhatsAppTransport({
    audit,
    socket: async () => sock,
    operator: () => operator,
    admission: admissionOf({ dmPolicy: "self", allowFrom: [], groups: {} }),
    sent,
  });
  return { transport, sent, operator, home };
}

/** A 1x1 PNG. */
export const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);
