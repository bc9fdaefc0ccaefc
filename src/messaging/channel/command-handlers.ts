/**
 * The shared command handlers, by name. Each returns the reply TEXT ("" when its answer is a widget
 * already posted) and takes no platform address: what it acts on is the session key and the ports
 * the hub binds for this message. A channel supplies a handler of its own only where its platform
 * genuinely differs (Discord's /sessions is a resume picker, not a listing).
 */
import type { PendingApprovals } from "../approval/approvals.js";
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import type { QueueControl } from "../queue/mid-turn-router.js";
import { stopRunningTurn } from "../queue/stop.js";
import type { ScheduleControl } from "../schedule/scheduler.js";
import type { ParsedSchedule } from "../schedule/spec.js";
import { formatDuration, parseAt, parseEvery } from "../schedule/spec.js";
import type { AuditSink } from "../security/audit.js";
import { compactSession } from "../session/agent-controls.js";
import { recordManualTitle } from "../session/auto-title.js";
import type { ConversationHistory } from "../session/history.js";
import {
  hostUtcOffsetMinutes,
  rebindConversationLocation,
  releaseConversationLocation,
} from "../session/keys.js";
import type { PrivacyModes } from "../session/privacy-mode.js";
import { MODE_INCOGNITO, MODE_TEMPORARY } from "../session/privacy-mode.js";
import type { SessionBinder } from "../session/resume.js";
import type { SessionManager } from "../session/session-manager.js";
import type { SessionStore } from "../session/session-store.js";
import type { JsonValue, TranscriptEntry } from "../store/port.js";
import { oneLine } from "../text/clip.js";
import type { PipelineProvider } from "../turn/pipeline.js";
import type { CommandKit, CommandSpec } from "./command-kit.js";
import type { GrantControl } from "./contract.js";
import type { Egress } from "./egress.js";
import { describeEgress } from "./egress.js";
import type { ModelPicker } from "./model-picker.js";
import type { Conversation, PickerSurface } from "./surface.js";
import { placeOf } from "./surface.js";

/** What a handler may use: the hub's shared machinery, never a platform client. */
export interface HubServices {
  readonly channel: string;
  readonly sessions: SessionManager<PipelineProvider>;
  readonly store: SessionStore;
  readonly router: QueueControl;
  readonly approvals: PendingApprovals;
  readonly grant: GrantControl;
  readonly audit: AuditSink;
  readonly logger: Logger;
  readonly commands: CommandKit;
  readonly models: ModelPicker;
  readonly privacy: PrivacyModes | undefined;
  readonly binder: SessionBinder | undefined;
  /** The conversation history (transcripts); absent where nothing is persisted. */
  readonly history: ConversationHistory | undefined;
  /** The help card's last line (how this channel's approvals are answered). */
  readonly helpFooter: string;
  generation(route: string): number;
  readonly clock: Clock;
  /** Scheduled prompts; absent where nothing runs them. */
  readonly schedules: ScheduleControl | undefined;
  /** The egress, for `/link <target>`: configured targets resolved and authorized now. */
  readonly egress: Pick<Egress, "resolve" | "targetNames"> | undefined;
}

/** One command call: who, where (as a conversation, not an address), and on which session. */
export interface CommandCall<X = unknown> {
  hub: HubServices;
  spec: CommandSpec;
  arg: string;
  userId: string;
  /** The channel's configured owner sent it. */
  owner: boolean;
  conversation: Conversation;
  /** The session the conversation routes to now. */
  key: string;
  /** Start a fresh generation of this conversation; returns the new key. */
  advance(): string;
  /** Button lists for this conversation, where the channel has them. */
  pickers: PickerSurface | undefined;
  /** Delivers a later notice into this conversation (the grant's lapse). */
  notify(text: string): Promise<void>;
  /** Shows the conversation's new name where the platform has one. */
  retitle(title: string): Promise<void>;
  /** What the channel attached to the message (e.g. the slash interaction a reply belongs to). */
  extra: X | undefined;
  /** The conversation's address in journal form (a scheduled prompt keeps it). */
  address: JsonValue;
}

export type CommandHandler<X = unknown> = (call: CommandCall<X>) => Promise<string>;

const MAX_LISTED = 20;
/** /history without a number shows this many lines; with one, at most HISTORY_MAX. */
const HISTORY_DEFAULT = 10;
const HISTORY_MAX = 50;
/** One history line at most this long (code points): a listing, not a replay of the answer. */
const HISTORY_LINE_CHARS = 300;

/** A conversation-wide listing is only ever shown to the owner, one to one (a room sees replies). */
function listingRefusal(call: CommandCall, what: "sessions" | "link" = "sessions"): string | null {
  const reason = !call.conversation.direct ? "shared_audience" : !call.owner ? "not_owner" : null;
  if (reason === null) return null;
  call.hub.audit.log(`${call.hub.channel}.${what}`, "refused", { user: call.userId, reason });
  if (what === "link")
    return reason === "shared_audience"
      ? "Linking to a target is only done in a direct conversation with the bot."
      : "Only the owner of this bot can link a conversation to a target.";
  return reason === "shared_audience"
    ? "Session listings are only shown in a direct conversation with the bot."
    : "Only the owner of this bot can list its sessions.";
}

export const SHARED_HANDLERS: Readonly<Record<string, CommandHandler>> = {
  help: async ({ hub }) => hub.commands.help(hub.helpFooter),

  stop: ({ hub, key }) =>
    stopRunningTurn(hub.sessions, key, {
      router: hub.router,
      approvals: hub.approvals,
      onError: (error) => hub.logger.warn(`${hub.channel}: stop failed`, { error: String(error) }),
    }),

  new: async (call) => {
    const { hub, key } = call;
    const stop = hub.commands.spell("stop");
    if (hub.sessions.isBusy(key))
      return `A turn is still running: ${stop} it first, then ${hub.commands.spell("new")}.`;
    // A fresh start here also ends a resumed attachment: otherwise the next message would resume it.
    const released = hub.binder ? await hub.binder.release(call.conversation.link) : undefined;
    if (released && !released.ok) return released.text;
    const next = call.advance();
    await hub.sessions.evict(key, { carryTo: next });
    return `${released?.detached ? `${released.text}\n` : ""}🆕 Fresh conversation started.`;
  },

  status: async ({ hub, key, conversation }) => {
    const running = await hub.sessions.hasActiveTurn(key);
    const title = hub.store.titleOf(key)?.title;
    return [
      "**Status**",
      `- Conversation: ${conversation.direct ? "direct" : "shared"}, generation ${hub.generation(conversation.route)}`,
      ...(title ? [`- Title: ${oneLine(title, 80)}`] : []),
      `- Turn: ${running ? "running" : hub.sessions.isBusy(key) ? "finishing" : "idle"}`,
      `- Queued: ${hub.router.receiptQueue(key).size}`,
      ...(hub.privacy ? [`- Privacy: ${hub.privacy.modeOf(key) ?? "normal"}`] : []),
      `- Auto-approve: ${hub.grant.describe()}`,
    ].join("\n");
  },

  yolo: async (call) =>
    call.hub.grant.command(call.arg, {
      source: call.hub.channel,
      caller: call.userId,
      owner: call.owner,
      direct: call.conversation.direct,
      command: call.hub.commands.spell("yolo").replace(/`/g, ""),
      notify: (text) => call.notify(text),
    }),

  compact: ({ hub, key }) => compactSession(hub.sessions, key, { newCommand: hub.commands.spell("new") }),

  model: (call) =>
    call.hub.models.command({
      sessionKey: call.key,
      arg: call.arg,
      owner: call.userId,
      scope: placeOf(call.conversation),
      command: call.hub.commands.spell("model"),
      pickers: call.pickers,
    }),

  sessions: async (call) => {
    const refusal = listingRefusal(call);
    if (refusal) return refusal;
    const { hub } = call;
    hub.audit.log(`${hub.channel}.sessions`, "allowed", { user: call.userId });
    const keys = [...new Set([...hub.sessions.activeKeys(), ...hub.store.keys()])].sort();
    if (keys.length === 0) return "No sessions yet.";
    const lines = keys.slice(0, MAX_LISTED).map((k) => {
      const title = hub.store.titleOf(k)?.title;
      const running = hub.sessions.isBusy(k) ? " (running)" : "";
      return `- ${title ? `${oneLine(title, 80)} — ` : ""}\`${k}\`${running}`;
    });
    const more = keys.length > MAX_LISTED ? [`…and ${keys.length - MAX_LISTED} more`] : [];
    return ["**Sessions**", ...lines, ...more].join("\n");
  },

  link: (call) =>
    call.arg.trim() === ""
      ? rebindConversationLocation(call.hub.store, {
          key: call.key,
          location: call.conversation.link,
          unlinkCommand: call.hub.commands.spell("unlink"),
        })
      : linkToTarget(call),

  unlink: async ({ hub, key, conversation }) => {
    // Detach a resumed session first (durably, record retired), then this conversation's own opt-out.
    const released = hub.binder ? await hub.binder.release(conversation.link) : undefined;
    if (released && !released.ok) return released.text;
    const own = await releaseConversationLocation(hub.store, {
      key,
      location: conversation.link,
      channel: hub.channel,
      logger: hub.logger,
    });
    return released?.detached ? released.text : own.text;
  },

  title: async ({ hub, key, arg, spec, retitle }) => {
    const name = oneLine(arg, 80);
    if (!name) return hub.commands.usage(spec);
    // A restricted conversation persists nothing, a title included.
    if (hub.privacy?.isRestricted(key))
      return "This conversation is temporary or incognito, so its title is not saved.";
    recordManualTitle(hub.store, key, name);
    await retitle(name);
    return `✏️ Title set: ${name}`;
  },

  history: async ({ hub, key, arg, spec }) => {
    const n = arg.trim() === "" ? HISTORY_DEFAULT : Number(arg.trim());
    if (!Number.isInteger(n) || n < 1) return hub.commands.usage(spec);
    if (!hub.history) return "No history is kept here.";
    if (hub.history.restricted(key))
      return "This conversation is temporary or incognito, so nothing of it is kept.";
    const lines = await hub.history.recent(key, Math.min(n, HISTORY_MAX));
    if (lines.length === 0) return "Nothing in this conversation's history yet.";
    return [
      `**Last ${lines.length} line${lines.length === 1 ? "" : "s"}**`,
      ...lines.map((l) => historyLine(l.entry)),
    ].join("\n");
  },

  temporary: (call) => privacy(call, MODE_TEMPORARY),
  incognito: (call) => privacy(call, MODE_INCOGNITO),

  every: (call) => schedule(call, parseEvery),
  at: (call) => schedule(call, parseAt),

  jobs: async ({ hub, conversation }) => {
    if (!hub.schedules) return SCHEDULES_UNAVAILABLE;
    const jobs = hub.schedules.list(conversationKeyOf(hub.channel, conversation));
    if (jobs.length === 0) return `No scheduled prompts here. ${hub.commands.spell("every")} adds one.`;
    const offset = hostUtcOffsetMinutes;
    return [
      "**Scheduled prompts**",
      ...jobs.map((j) => {
        const when =
          j.schedule.kind === "every"
            ? `every ${formatDuration(j.schedule.everyMs)}, next ${localTime(j.nextRunMs, offset)}`
            : `at ${localTime(j.schedule.atMs, offset)}`;
        return `- \`${j.id}\` ${when}: ${oneLine(j.prompt, 80)}`;
      }),
      "",
      `${hub.commands.spell("unschedule", "<id>")} cancels one.`,
    ].join("\n");
  },

  unschedule: async ({ hub, conversation, arg, spec }) => {
    if (!hub.schedules) return SCHEDULES_UNAVAILABLE;
    const id = arg.trim();
    if (!id) return hub.commands.usage(spec);
    return (await hub.schedules.cancel(conversationKeyOf(hub.channel, conversation), id))
      ? `🗑️ Cancelled \`${oneLine(id, 40)}\`.`
      : `No scheduled prompt \`${oneLine(id, 40)}\` here. ${hub.commands.spell("jobs")} lists them.`;
  },
};

const SCHEDULES_UNAVAILABLE = "Scheduled prompts are not available here.";

/** The conversation a job belongs to: its channel and route (what /jobs lists and who may cancel). */
export function conversationKeyOf(channel: string, conversation: Conversation): string {
  return `${channel}:${conversation.route}`;
}

/** "2025-06-01 09:00" in the host's local time: the clock the person scheduling reads. */
function localTime(epochMs: number, offset: (ms: number) => number): string {
  return new Date(epochMs + offset(epochMs) * 60_000).toISOString().slice(0, 16).replace("T", " ");
}

/** /every and /at: parsed against the host's clock, kept by the scheduler, answered here. */
async function schedule(
  call: CommandCall,
  parse: (arg: string, clock: { now: number; utcOffsetMinutes: (ms: number) => number }) => ParsedSchedule,
): Promise<string> {
  const { hub } = call;
  if (!hub.schedules) return SCHEDULES_UNAVAILABLE;
  // A restricted conversation persists nothing, and a schedule is its words kept for later.
  if (hub.privacy?.isRestricted(call.key))
    return "This conversation is temporary or incognito, so nothing of it is saved: no scheduled prompts here.";
  const parsed = parse(call.arg, { now: hub.clock.now(), utcOffsetMinutes: hostUtcOffsetMinutes });
  if (!parsed.ok) return `${parsed.error}\n${hub.commands.usage(call.spec)}`;
  const added = await hub.schedules.add({
    channel: hub.channel,
    conversationKey: conversationKeyOf(hub.channel, call.conversation),
    sessionKey: call.key,
    userId: call.userId,
    deliverTo: { kind: "link", link: call.conversation.link },
    address: call.address,
    prompt: parsed.prompt,
    schedule: parsed.schedule,
    firstRunMs: parsed.firstRunMs,
  });
  if (!added.ok) return added.error;
  const { job } = added;
  const when =
    job.schedule.kind === "every"
      ? `every ${formatDuration(job.schedule.everyMs)}, first at ${localTime(job.nextRunMs, hostUtcOffsetMinutes)}`
      : `at ${localTime(job.nextRunMs, hostUtcOffsetMinutes)}`;
  return `⏰ Scheduled \`${job.id}\` ${when}. Its answer will come here. ${hub.commands.spell("jobs")} lists, ${hub.commands.spell("unschedule", job.id)} cancels.`;
}

/**
 * /link <target>: this conversation's session is mirrored into an operator-configured target (the
 * web chat into the owner's Telegram). Only the owner, in a direct conversation: it sends this
 * conversation's words somewhere else.
 */
async function linkToTarget(call: CommandCall): Promise<string> {
  const { hub } = call;
  const refusal = listingRefusal(call, "link");
  if (refusal) return refusal;
  const name = call.arg.trim();
  const names = hub.egress?.targetNames() ?? [];
  if (!hub.egress || !names.includes(name))
    return names.length
      ? `No target \`${oneLine(name, 40)}\`. Configured: ${names.map((n) => `\`${n}\``).join(", ")}.`
      : "No targets are configured (the `targets` section of the configuration).";
  const found = hub.egress.resolve({ kind: "target", name }, "mirror");
  if (!found.ok) return `Cannot link to \`${name}\`: ${describeEgress(found.result)}.`;
  await hub.store.batch(async () => {
    // Claim first (it may refuse), then withdraw an earlier /unlink: the order rebind uses too.
    await hub.store.setMirrorLink(call.key, found.resolved.link);
    await hub.store.setMirrorOptOut(call.key, false);
  });
  hub.audit.log(`${hub.channel}.link`, "allowed", { user: call.userId, target: name });
  return `✅ Linked: this conversation's answers will also be delivered to \`${name}\`. Send ${hub.commands.spell("unlink")} to stop.`;
}

/** One transcript line as /history lists it: who, then one clipped line of what. */
function historyLine(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case "user": {
      const files = entry.attachments.length
        ? ` 📎 ${entry.attachments.map((a) => oneLine(a, 60)).join(", ")}`
        : "";
      return `- 👤 ${oneLine(entry.text, HISTORY_LINE_CHARS)}${files}`;
    }
    case "agent":
      return `- 🤖 ${oneLine(entry.text, HISTORY_LINE_CHARS)}`;
    case "tool":
      return `- 🔧 ${oneLine(entry.title, 120)}`;
    case "approval":
      return `- 🔐 ${oneLine(entry.title, 120)}: ${entry.outcome}`;
  }
}

async function privacy(
  call: CommandCall,
  mode: typeof MODE_TEMPORARY | typeof MODE_INCOGNITO,
): Promise<string> {
  const modes = call.hub.privacy;
  if (!modes) return "Privacy modes are not available here.";
  let notice = "";
  const applied = await modes.applyMode(mode, call.key, {
    source: call.hub.channel,
    caller: call.userId,
    notify: (text) => {
      notice = text;
    },
  });
  return applied ? notice : `This conversation is already ${mode}.`;
}
