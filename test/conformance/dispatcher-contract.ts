/**
 * The dispatcher half of the channel contract: the whole channel (its start(), the shared
 * ConversationHub, its surface and renderer) against its wire-level fake, with a scripted agent.
 * These are the behaviours that drifted when each channel had its own dispatcher; every channel
 * must pass them, so a new one cannot drift either.
 */
import { expect, it, vi } from "vitest";
import { AutoApproveGrant } from "../../src/messaging/approval/grant.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ConversationHub } from "../../src/messaging/channel/hub.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { ModelMenu } from "../../src/messaging/session/agent-controls.js";
import { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { SessionStore } from "../../src/messaging/session/session-store.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { PipelineProvider } from "../../src/messaging/turn/pipeline.js";
import type { ScriptedProviderOptions, ScriptedTurn, ScriptStep } from "../../src/providers/scripted.js";
import { ScriptedProvider } from "../../src/providers/scripted.js";
import { openTestStore } from "../helpers/channel-context.js";
import { done, tempHome, text, untilShown } from "../helpers/channel-under-test.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { CheckResult } from "./contract.js";

/** What the contract hands a channel to start with: the shared machinery, same store across restarts. */
export interface DispatchShared {
  sessions: SessionManager<PipelineProvider>;
  /** The real store (journal, ledger, history) and its session rows, as the gateway wires them. */
  parley: ParleyStore;
  store: SessionStore;
  audit: MemoryAuditSink;
  logger: MemoryLogger;
  grant: AutoApproveGrant;
  queueMode: "steer" | "queue";
}

/** One running channel, driven the way its users drive it. */
export interface LiveChannel {
  /** Send `text` from `user` in that user's direct conversation with the bot. */
  say(user: string, text: string): Promise<void>;
  /** The session key the user's direct conversation routes to now. */
  keyOf(user: string): string;
  /** How many messages wait behind the user's running turn. */
  queued(user: string): number;
  stop(): Promise<void>;
}

/**
 * A started channel as the contract drives it: `say` is how a user's message reaches the channel,
 * `addressOf` names the user's direct conversation, and its hub answers keyOf and queued from that.
 */
export function liveChannel<A, P>(
  running: { hub: ConversationHub<A, P>; stop(): Promise<void> },
  addressOf: (user: string) => A,
  say: (user: string, text: string) => Promise<void>,
): LiveChannel {
  const keyOf = (user: string) => running.hub.keyOf(addressOf(user));
  return {
    say,
    keyOf,
    queued: (user) => running.hub.router.receiptQueue(keyOf(user)).size,
    stop: () => running.stop(),
  };
}

/** One fake platform that outlives restarts of the channel. */
export interface DispatchLab {
  /** The configured owner, and an allow-listed user who is not the owner (absent: none can exist). */
  owner: string;
  guest: string | undefined;
  start(shared: DispatchShared): Promise<LiveChannel>;
  /** Everything a user could read so far: bodies as rendered, status lines, button labels. */
  visible(): string[];
  /** Reactions put on users' messages. */
  reactions(): string[];
  close(): Promise<void>;
}

export interface DispatcherHarness {
  name: string;
  /**
   * The mid-turn modes the channel runs (absent: both). A channel whose answer is bound to the
   * message that asked (WeCom) never holds a message behind a live turn: steer only.
   */
  queueModes?: readonly ("steer" | "queue")[];
  lab(): Promise<DispatchLab>;
  /** Shows nothing of a running turn but notices: no live status line (Feishu's buffered replies). */
  buffered?: boolean;
  /** Never holds a message behind a running turn: it is steered in, or refused with a notice. */
  steerOnly?: boolean;
}

export const DISPATCHER_CHECKS = [
  "/yolo records its caller and is refused to a non-owner",
  "/new survives a restart",
  "picker labels are display-safe",
  "a typed 1 closes the approval prompt on screen",
  "a muted conversation gets no receipts or steer reactions",
] as const;

const SECRET = "AKIAQ7ZR3M5TXW2KP9VB";

export interface Rig {
  lab: DispatchLab;
  shared: DispatchShared;
  keys: string[];
  providers: ScriptedProvider[];
  live: LiveChannel;
}

export async function rig(
  h: DispatcherHarness,
  o: {
    turns?: (ScriptedTurn | ScriptStep[])[];
    provider?: ScriptedProviderOptions;
    queueMode?: "steer" | "queue";
  } = {},
): Promise<Rig> {
  const lab = await h.lab();
  const keys: string[] = [];
  const providers: ScriptedProvider[] = [];
  const audit = new MemoryAuditSink();
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: (key) => {
      keys.push(key);
      const p = new ScriptedProvider(o.turns ?? [], o.provider ?? {});
      providers.push(p);
      return p;
    },
  });
  const parley = await openTestStore(tempHome("contract"));
  const shared: DispatchShared = {
    sessions,
    parley,
    store: parley.sessions,
    audit,
    logger: new MemoryLogger(),
    grant: new AutoApproveGrant({ audit }),
    queueMode: o.queueMode ?? "steer",
  };
  return { lab, shared, keys, providers, live: await lab.start(shared) };
}

export async function close(r: Rig): Promise<void> {
  await r.live.stop();
  await r.shared.sessions.closeAll();
  await r.shared.parley.close();
  await r.lab.close();
}

export const seen = (r: Rig, pattern: RegExp | string) => untilShown(() => r.lab.visible(), pattern);

export function dispatcherContract(h: DispatcherHarness, results: Map<string, CheckResult>): void {
  const check = (name: (typeof DISPATCHER_CHECKS)[number], fn: () => Promise<void>) =>
    it(name, async () => {
      results.set(name, false);
      await fn();
      results.set(name, true);
    });

  check("/yolo records its caller and is refused to a non-owner", async () => {
    const r = await rig(h);
    try {
      const { owner, guest } = r.lab;
      if (guest !== undefined) {
        await r.live.say(guest, "/yolo on");
        await seen(r, "Only the owner of this bot can switch auto-approve on.");
        expect(r.shared.audit.find("auto_approve", "refused")[0]?.fields).toMatchObject({
          source: h.name,
          caller: guest,
          reason: "not_owner",
        });
      } else {
        // Nobody but the owner is admitted at all: a stranger's /yolo stops at the audited gate.
        await r.live.say("stranger", "/yolo on");
        await vi.waitFor(() => expect(r.shared.audit.find("inbound", "denied").length).toBeGreaterThan(0));
      }
      expect(r.shared.grant.isActive()).toBe(false);
      await r.live.say(owner, "/yolo on 30m");
      await seen(r, "Auto-approve is ON for 30m");
      expect(r.shared.grant.isActive()).toBe(true);
      expect(r.shared.audit.find("auto_approve", "granted")[0]?.fields).toMatchObject({
        source: h.name,
        caller: owner,
      });
    } finally {
      await close(r);
    }
  });

  check("/new survives a restart", async () => {
    const r = await rig(h, {
      turns: [
        [text("one"), done],
        [text("two"), done],
        [text("three"), done],
      ],
    });
    try {
      const { owner } = r.lab;
      await r.live.say(owner, "hello");
      await seen(r, "one");
      await vi.waitFor(() => expect(r.shared.sessions.isBusy(r.keys[0] ?? "")).toBe(false));
      await r.live.say(owner, "/new");
      await seen(r, "Fresh conversation started");
      const fresh = r.live.keyOf(owner);
      expect(fresh).not.toBe(r.keys[0]);
      await r.live.stop();
      r.live = await r.lab.start(r.shared);
      // A restarted channel reads the generation back: the discarded conversation stays discarded.
      expect(r.live.keyOf(owner)).toBe(fresh);
      await r.live.say(owner, "after the restart");
      await vi.waitFor(() => expect(r.keys.at(-1)).toBe(fresh));
    } finally {
      await close(r);
    }
  });

  check("picker labels are display-safe", async () => {
    const menu: ModelMenu = {
      configId: "model",
      current: "a",
      options: [
        { id: "a", name: `fast ${SECRET}` },
        {
          id: "b",
          name: `careful AKIA**${SECRET.slice(4, 8)}**${SECRET.slice(8)}`,
          description: `see ${SECRET}`,
        },
      ],
    };
    const r = await rig(h, { turns: [[text("hi"), done]], provider: { modelMenu: menu } });
    try {
      await r.live.say(r.lab.owner, "hello");
      await seen(r, "hi");
      await vi.waitFor(() => expect(r.shared.sessions.isBusy(r.keys[0] ?? "")).toBe(false));
      await r.live.say(r.lab.owner, "/model");
      await seen(r, "fast");
      const shown = r.lab.visible().join("\n");
      expect(shown).not.toContain(SECRET.slice(4));
      expect(shown).not.toContain(SECRET.slice(8));
    } finally {
      await close(r);
    }
  });

  check("a typed 1 closes the approval prompt on screen", async () => {
    const r = await rig(h, {
      turns: [
        {
          steps: [permissionRequest({ requestId: "r1", title: "rm -rf build" })],
          onPermission: { approve: [text("removed"), done], deny: [text("kept"), done] },
        },
      ],
    });
    try {
      const { owner } = r.lab;
      await r.live.say(owner, "clean up");
      await seen(r, "rm -rf build");
      await r.live.say(owner, "1");
      await seen(r, "removed");
      // The prompt itself shows how it was decided: a decided prompt never looks live.
      await seen(r, /rm -rf build[\s\S]*Approved \(this once\)/);
      expect(r.providers[0]?.answers).toEqual([{ requestId: "r1", verdict: "approve" }]);
    } finally {
      await close(r);
    }
  });

  check("a muted conversation gets no receipts or steer reactions", async () => {
    const modes = ["queue", "steer"] as const;
    const supported = h.queueModes ?? modes;
    for (const queueMode of modes.filter((m) => supported.includes(m))) {
      const timers = new ManualClock();
      const r = await rig(h, {
        queueMode,
        // The first turn waits on a clock that never moves: the second message arrives mid-turn.
        turns: [[{ delayMs: 60_000 }], [text("after"), done]],
        provider: { timers, supportsSteer: queueMode === "steer" },
      });
      try {
        const { owner } = r.lab;
        r.shared.store.setMuted(r.live.keyOf(owner), "origin", true);
        await r.live.say(owner, "first");
        await vi.waitFor(() => expect(r.providers[0]?.hasActiveTurn()).toBe(true));
        await r.live.say(owner, "second");
        if (queueMode === "queue" && h.steerOnly)
          // Nothing is held here: the message is refused, and the refusal is not said to a muted chat.
          await vi.waitFor(() => expect(r.shared.audit.find("mid_turn", "refused")).toHaveLength(1));
        else if (queueMode === "queue") await vi.waitFor(() => expect(r.live.queued(owner)).toBe(1));
        else await vi.waitFor(() => expect(r.providers[0]?.steers).toEqual(["second"]));
        expect(r.lab.visible().filter((v) => /Queued|Now answering|still working/.test(v))).toEqual([]);
        expect(r.lab.reactions()).toEqual([]);
      } finally {
        await close(r);
      }
    }
  });
}
