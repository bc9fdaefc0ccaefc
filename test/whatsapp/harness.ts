/**
 * Starts the whole WhatsApp channel (its start()) against the fake with scripted agents, in a data
 * home holding a linked device's keys: the gateway's wiring, only the socket faked (at the WaSocket
 * port, see test/fakes/whatsapp/socket.ts).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { AuthenticationState } from "@whiskeysockets/baileys";
import type { Clock } from "../../src/messaging/base/clock.js";
import type { GrantControl } from "../../src/messaging/channel/contract.js";
import type { Egress } from "../../src/messaging/channel/egress.js";
import type { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { AuditSink } from "../../src/messaging/security/audit.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";
import { defaultSocketOptions } from "../../src/whatsapp/client.js";
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
import { testChannelContext } from "../helpers/channel-context.js";
import type { CrashableChannel, ScriptedAgentOptions } from "../helpers/channel-under-test.js";
import {
  channelMachinery,
  crashableChannel,
  fakePerTest,
  scriptedAgent,
  tempHome,
} from "../helpers/channel-under-test.js";
import { testDrops } from "../helpers/drops.js";

export { done, text } from "../helpers/channel-under-test.js";

/** The operator's phone number, a guest the operator admits, and a stranger. */
export const OPERATOR = "+4917000000001";
export const GUEST = "+4917000000002";
export const GUEST_JID = "4917000000002@s.whatsapp.net";
export const GUEST_LID = "80000000002@lid";
export const STRANGER_JID = "4917000000099@s.whatsapp.net";
export const GROUP = "120363000000000001@g.us";

/** What WhatsApp Web answers for its current version, in tests (no network): a current one. */
export const CURRENT_VERSION: [number, number, number] = [2, 3000, 1099999999];
export const fetchedVersion = async () => ({ version: CURRENT_VERSION, isLatest: true });

/** A data home whose keys are linked to the fake's operator (what `parley whatsapp link` leaves). */
export async function linkedHome(fake: FakeWhatsApp, home = tempHome("wa")) {
  const auth = await openAuthState(home);
  auth.state.creds.me = {
    id: `${fake.operator.pn.split("@")[0]}:12@s.whatsapp.net`,
    lid: fake.operator.lid,
    name: "Operator",
  };
  auth.state.creds.registered = true;
  // What pair-success leaves (validate-connection.js configureSuccessfulPairing): the signed identity.
  auth.state.creds.account = { details: Buffer.from("fake-adv-details") };
  await auth.saveCreds();
  return home;
}

/** Its crash() stops taking messages and drops the connection without settling anything: a killed process. */
export type ChannelUnderTest = CrashableChannel<RunningWhatsApp> & {
  /** The drop ledger the channel's ctx.drops counts into. */
  dropLedger: InboundDropLedger;
};

export interface ChannelOptions extends ScriptedAgentOptions {
  whatsapp?: Record<string, unknown>;
  home?: string;
  overrides?: WhatsAppStartOverrides & { clock?: Clock };
  grant?: GrantControl;
  /** The gateway's egress (another channel registered on it hears the owner notices). */
  egress?: (audit: MemoryAuditSink) => Egress;
  queueMode?: "steer" | "queue";
  staleAfterMs?: number;
}

export async function startChannel(fake: FakeWhatsApp, o: ChannelOptions = {}): Promise<ChannelUnderTest> {
  const home = o.home ?? (await linkedHome(fake));
  const { clock, ...overrides } = o.overrides ?? {};
  const machinery = await channelMachinery({
    home,
    agentFor: (key) => scriptedAgent(key, o),
    ...(clock ? { storeNow: () => clock.now() } : {}),
  });
  const ctx = testChannelContext<WhatsAppSettings>(whatsappChannel, {
    ...machinery,
    section: { webSocketUrl: fake.webSocketUrl, ...o.whatsapp },
    queueMode: o.queueMode ?? "steer",
    ...(o.staleAfterMs !== undefined ? { staleAfterMs: o.staleAfterMs } : {}),
    ...(clock ? { clock } : {}),
    ...(o.grant ? { grant: o.grant } : {}),
  });
  if (o.egress) ctx.egress = o.egress(ctx.audit);
  const running = await startWhatsApp(ctx, {
    createSocket: fake.createSocket,
    renderer: { editIntervalMs: 0, firstFrameMs: 0 },
    fetchVersion: fetchedVersion,
    ...overrides,
  });
  const channel = crashableChannel(machinery, running, async (r) => {
    await r.intake.close();
    await r.connection.stop();
  });
  return { ...channel, dropLedger: ctx.dropLedger };
}

/** One fake per test and the channels started against it, stopped afterwards. Call at module level. */
export function fakeWhatsAppLab(options: { now?: () => number } = {}): {
  readonly fake: FakeWhatsApp;
  channel(o?: ChannelOptions): Promise<ChannelUnderTest>;
} {
  const lab = fakePerTest<FakeWhatsApp, ChannelUnderTest>({
    name: "the fake",
    start: async () => {
      const fake = await Fake.start({ lifetimeMs: 30_000, ...(options.now ? { now: options.now } : {}) });
      fake.groups.add(GROUP);
      fake.person(GUEST_JID, GUEST_LID);
      return fake;
    },
    stop: (fake) => fake.stop(),
  });
  return {
    get fake(): FakeWhatsApp {
      return lab.fake;
    },
    async channel(o: ChannelOptions = {}): Promise<ChannelUnderTest> {
      return lab.stopAfterTest(await startChannel(lab.fake, o));
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
  const home = tempHome("wa-transport");
  mkdirSync(join(home, "whatsapp"), { mode: 0o700 });
  const sent = SentIds.open(home);
  const me = { id: `${fake.operator.pn.split("@")[0]}:12@s.whatsapp.net`, lid: fake.operator.lid };
  const sock = fake.createSocket(
    { creds: { me, account: {} }, keys: {} } as unknown as AuthenticationState,
    defaultSocketOptions(),
  );
  await new Promise<void>((resolve) =>
    sock.ev.on("connection.update", (u) => {
      if (u.connection === "open") resolve();
    }),
  );
  const operator = operatorOf(me);
  const transport = new WhatsAppTransport({
    drops: testDrops(audit, "whatsapp"),
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
