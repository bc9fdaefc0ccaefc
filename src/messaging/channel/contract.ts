/**
 * The channel plug-in contract. A channel is an entry (its config schema, the secrets it reads, a
 * probe that imports no SDK, a lazy loader) and a module that starts it against a ChannelContext.
 * The gateway composes config from the entries and hands each started channel the shared machinery;
 * no channel imports the gateway, and the gateway imports channels only through its registry.
 */
import type { z } from "zod";
import type { AutoApproveGrant } from "../approval/grant.js";
import type { Clock } from "../base/clock.js";
import type { Logger } from "../base/logger.js";
import type { QueueMode } from "../queue/mid-turn-router.js";
import type { ScheduleControl } from "../schedule/scheduler.js";
import type { AuditSink } from "../security/audit.js";
import type { TitleGenerator } from "../session/auto-title.js";
import type { ContextThresholds } from "../session/context-thresholds.js";
import type { RotationPolicy } from "../session/keys.js";
import type { SessionManager } from "../session/session-manager.js";
import type { SessionStore } from "../session/session-store.js";
import type { ConversationOwnership } from "../store/ownership.js";
import type { DurableState } from "../store/port.js";
import type { ApprovalMode } from "../turn/driver.js";
import type { PipelineProvider, TurnPipelineDeps } from "../turn/pipeline.js";
import type { Egress } from "./egress.js";
import type { InboundDrops } from "./inbound-drops.js";
import type { JournalPolicy } from "./journal.js";
import type { ChannelStatus, HttpRoutes } from "./ops-port.js";
import type { MessagingTransport } from "./transport.js";
import type { TurnSink } from "./turn-sink.js";

/** The effective environment (process env over $PARLEY_HOME/.env), read once. Values are never logged. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface ChannelProbe {
  status: "configured" | "incomplete" | "disabled";
  /** The exact settings still missing (names only, never values). */
  missing?: string[];
  note?: string;
}

/**
 * What a channel must declare. Settings come from its config section, validated by `configSchema`;
 * secrets come only from the environment (or $PARLEY_HOME/.env), never from a config file. One
 * precedence rule for every channel: a non-secret setting named in `settingEnv` may also come from
 * the environment, and the environment wins (one process, a test or a staging run, can be pointed
 * elsewhere without editing a shared file).
 */
export interface ChannelEntry<S extends ChannelSettings = ChannelSettings> {
  name: string;
  /** The operator's setup page. */
  docs: string;
  /** The channel's config section, strict (a typo is named), defaults applied. */
  configSchema: z.ZodType<S, unknown>;
  /** Environment names of the secrets it reads (scrubbed from the agent's environment). */
  secretEnv: readonly string[];
  /** Non-secret settings that an environment variable may set: section key -> env name. */
  settingEnv?: Readonly<Record<string, string>>;
  /**
   * Section keys that decide who is admitted or where credentials go (allow-lists, API origins,
   * hosts): accepted only from trusted configuration, never from a working-directory file.
   */
  securityKeys?: readonly string[];
  /**
   * The settings and secrets it still lacks to start (names only); empty when complete. `home` is
   * the data home, for a channel whose credential lives there (a linked device's keys).
   */
  missing(settings: S, env: Env, home?: string): string[];
  /**
   * Whether the channel's credential is kept in the data home instead of the environment (a
   * WhatsApp linked device's keys). Its presence counts like a secret being set: the channel is then
   * on by default. Reads files only; imports no SDK.
   */
  credentialsInHome?(home: string): boolean;
  /**
   * Set (to the note doctor prints) for a channel with no credential that acts as the operator's own
   * account (iMessage): nothing signals intent, so it stays off until its section exists or
   * `enabled` is set, rather than reporting every install as incomplete.
   */
  optIn?: string;
  /**
   * The platform's own view for `parley doctor` (origin, who the bot is, linked account, what it
   * may do, permissions), asked once the section is configured or incomplete. One that calls the
   * platform loads its SDK lazily; it never prints a secret. `healthy: false` makes doctor fail.
   */
  doctor?(input: ChannelDoctorInput<S>): ChannelDoctorReport | Promise<ChannelDoctorReport>;
  /**
   * Subcommands under `parley <name>` (WhatsApp's `link`, `unlink`): each loads what it needs
   * lazily, like `load()`. The key is the subcommand's name.
   */
  cli?: Readonly<Record<string, ChannelCliCommand<S>>>;
  /** Load the module (and with it the SDK) only when the channel is configured. */
  load(): Promise<ChannelModule<S>>;
}

export interface ChannelDoctorInput<S> {
  settings: S;
  env: Env;
  home: string;
}

/** A channel's lines for `parley doctor` (each already prefixed ✓ / ✗ / - as the report reads). */
export interface ChannelDoctorReport {
  lines: string[];
  /** False when something keeps the channel from working (doctor then exits non-zero). */
  healthy: boolean;
}

/** What a channel subcommand gets: its settings, the data home, and the terminal. */
export interface ChannelCliContext<S> {
  settings: S;
  env: Env;
  home: string;
  /** The words after `parley <channel> <subcommand>`. */
  args: readonly string[];
  out: (line: string) => void;
  err: (line: string) => void;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM). */
  stopSignal: () => Promise<string>;
}

export interface ChannelCliCommand<S = ChannelSettings> {
  /** One line for `parley --help` ("link [--phone +4917…]"). */
  usage: string;
  help: string;
  /**
   * True for a command that only reads settings (prints a manifest): it may run beside a running
   * gateway. Otherwise it holds the data home's lock, as the gateway does.
   */
  readsSettingsOnly?: boolean;
  /** The exit code: 0 ok, 1 failed, 2 usage. */
  run(ctx: ChannelCliContext<S>): Promise<number>;
}

/** Every section has `enabled`; unset means "on when its credentials are set". */
export interface ChannelSettings {
  enabled?: boolean | undefined;
}

export interface ChannelModule<S extends ChannelSettings = ChannelSettings> {
  start(ctx: ChannelContext<S>): Promise<RunningChannel>;
}

/** The one process-wide auto-approve grant as a channel sees it (/yolo and the approval ladder). */
export type GrantControl = Pick<AutoApproveGrant, "isActive" | "command" | "describe">;

/** Gateway-wide settings a channel applies unless its own section overrides them. */
export interface ChannelDefaults {
  approvalMode: ApprovalMode;
  queueMode: QueueMode;
  /** Names the agent in session keys. */
  agentName: string;
  /** When a conversation is told its context is filling up, and when it is compacted (default 80/90). */
  contextThresholds?: ContextThresholds;
  /** When a conversation starts afresh on its own: after an idle gap, or at a daily hour (default never). */
  rotation?: RotationPolicy;
}

/**
 * The durable half of the kit: the intake journal (accept-before-ack), the delivery ledger, resume
 * records and cursors, with the policy for what a restart finds unfinished. The hub uses it on the
 * channel's behalf; a channel reads its own resume records and cursors here.
 */
export interface ChannelDurability extends JournalPolicy {
  state: DurableState;
  /** Several gateways share the store: which conversations this one serves (docs/scale-out.md). */
  ownership?: ConversationOwnership;
}

/** Everything a started channel gets from the gateway: one typed store, one complete pipeline. */
export interface ChannelContext<S extends ChannelSettings = ChannelSettings> {
  name: string;
  settings: S;
  env: Env;
  defaults: ChannelDefaults;
  home: string;
  logger: Logger;
  audit: AuditSink;
  /**
   * Every inbound frame the channel does not turn into a message (unknown shape, missing id, bot
   * echo, stranger, duplicate) is reported here with a reason: counted, audited, shown by doctor.
   */
  drops: InboundDrops;
  clock: Clock;
  sessions: SessionManager<PipelineProvider>;
  store: SessionStore;
  pipeline: TurnPipelineDeps;
  /**
   * Always set by the gateway. Absent only where nothing is persisted (unit tests of one part):
   * then nothing is journaled, no delivery is recorded and nothing is resumed.
   */
  durable?: ChannelDurability;
  grant: GrantControl;
  /** Names conversations after their first good exchange (absent: no auto-titles). */
  titles?: TitleGenerator;
  /** One line for the operator on stdout (the web chat URL). */
  announce: (line: string) => void;
  /** The one egress for messages nobody asked for right now (the gateway registers the transports). */
  egress?: Egress;
  /** Scheduled prompts (/every, /at, /jobs, /unschedule); absent: those commands say so. */
  schedules?: ScheduleControl;
  /**
   * Channel-server mode: authorized messages go to the agent host through this sink instead of an
   * agent turn. Absent: gateway mode.
   */
  sink?: TurnSink;
  /**
   * Where the channel reports its connection (up, down with a reason) and its hub's counts, for
   * health, metrics, owner alerts and `parley status` (ops-port.ts). Absent: nobody is told.
   */
  status?: ChannelStatus;
  /**
   * Routes the gateway serves on the channel's HTTP server ahead of its own (the web chat's: health
   * and metrics). Only a channel that runs the gateway's HTTP server mounts them.
   */
  routes?: HttpRoutes;
}

export interface RunningChannel {
  name: string;
  /** The channel's transport, for the gateway's egress (messages nobody asked for right now). */
  transport?: MessagingTransport;
  /** Stop intake, settle in-flight turns, then close network sessions. */
  stop(): Promise<void>;
}

/** Erases a typed entry for the registry; the entry's own code stays typed. */
export function defineChannel<S extends ChannelSettings>(entry: ChannelEntry<S>): ChannelEntry {
  return entry as unknown as ChannelEntry;
}

/**
 * The probe every channel gets: disabled when switched off, or when nothing of it is set (no
 * section, no secret); incomplete naming what is missing; configured otherwise.
 */
export function probeChannel(
  entry: ChannelEntry,
  settings: ChannelSettings,
  env: Env,
  sectionPresent: boolean,
  home?: string,
): ChannelProbe {
  if (settings.enabled === false) return { status: "disabled" };
  const secretSet =
    entry.secretEnv.some((name) => (env[name] ?? "").trim() !== "") ||
    (home !== undefined && entry.credentialsInHome?.(home) === true);
  // A channel with a credential of any kind stays off until it has one or is configured.
  const needsCredential = entry.secretEnv.length > 0 || entry.credentialsInHome !== undefined;
  if (settings.enabled === undefined && !sectionPresent && entry.optIn !== undefined)
    return { status: "disabled", note: entry.optIn };
  if (settings.enabled === undefined && !sectionPresent && !secretSet && needsCredential)
    return {
      status: "disabled",
      note:
        entry.secretEnv.length > 0
          ? `set ${entry.secretEnv.join(" or ")} to enable`
          : `link it to enable (parley ${entry.name} link)`,
    };
  const missing = entry.missing(settings, env, home);
  return missing.length ? { status: "incomplete", missing } : { status: "configured" };
}

/** A secret, trimmed; "" when unset. The only way a channel reads one. */
export function secretOf(env: Env, name: string): string {
  return (env[name] ?? "").trim();
}
