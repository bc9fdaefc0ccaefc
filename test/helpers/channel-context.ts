/**
 * A ChannelContext for a channel under test: the same shape the gateway hands a started channel,
 * built from the channel's own entry (its section parsed by its own schema), real shared machinery
 * (sessions, the auto-approve grant; with `parley`, the real store as the gateway wires it: its
 * session rows, journal, ledger, history, resume records and cursors; without, a memory session
 * store and nothing durable) and injectable clock and sinks.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { channelSettingsOf } from "../../src/gateway/config.js";
import { AutoApproveGrant } from "../../src/messaging/approval/grant.js";
import type { Clock } from "../../src/messaging/base/clock.js";
import { realClock } from "../../src/messaging/base/clock.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type {
  ChannelContext,
  ChannelEntry,
  ChannelSettings,
  Env,
  GrantControl,
} from "../../src/messaging/channel/contract.js";
import { InboundDropLedger } from "../../src/messaging/channel/inbound-drops.js";
import type { TurnSink } from "../../src/messaging/channel/turn-sink.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import type { TitleGenerator } from "../../src/messaging/session/auto-title.js";
import { ConversationHistory } from "../../src/messaging/session/history.js";
import type { RotationPolicy } from "../../src/messaging/session/keys.js";
import type { SessionManager } from "../../src/messaging/session/session-manager.js";
import type { SessionStore } from "../../src/messaging/session/session-store.js";
import { MemorySessionStore } from "../../src/messaging/session/session-store.js";
import type { ConversationOwnership } from "../../src/messaging/store/ownership.js";
import type { ParleyStore } from "../../src/messaging/store/port.js";
import type { ApprovalMode } from "../../src/messaging/turn/driver.js";
import type { PipelineProvider, TurnPipelineDeps } from "../../src/messaging/turn/pipeline.js";
import { openStore } from "../../src/store/index.js";

export interface TestContextOptions {
  /** The channel's raw config section; parsed by its own schema, as the gateway does. */
  section?: Record<string, unknown>;
  env?: Env;
  sessions: SessionManager<PipelineProvider>;
  store?: SessionStore;
  /** The real store, wired like the gateway wires it (see openTestStore). */
  parley?: ParleyStore;
  /** Several gateways on one store: this gateway's membership (the gateway wires its ClusterMember). */
  ownership?: ConversationOwnership;
  /** Over the gateway's defaults (15 minutes, 3 attempts). */
  staleAfterMs?: number;
  audit?: MemoryAuditSink;
  logger?: MemoryLogger;
  clock?: Clock;
  /** Idle or daily session rotation (the gateway's idleResetMinutes / dailyResetHour). */
  rotation?: RotationPolicy;
  grant?: GrantControl;
  home?: string;
  queueMode?: "steer" | "queue";
  approvalMode?: ApprovalMode;
  announce?: (line: string) => void;
  /** Auto-titles: absent, conversations are not named. */
  titles?: TitleGenerator;
  /** Pipeline settings beyond the shared machinery (the ingest's temp root). */
  pipeline?: Partial<TurnPipelineDeps>;
  /** Channel-server mode: authorized messages go to this sink. */
  sink?: TurnSink;
}

export function testChannelContext<S extends ChannelSettings>(
  entry: ChannelEntry,
  o: TestContextOptions,
): ChannelContext<S> & { audit: MemoryAuditSink; logger: MemoryLogger; dropLedger: InboundDropLedger } {
  const audit = o.audit ?? new MemoryAuditSink();
  const logger = o.logger ?? new MemoryLogger();
  // As the gateway wires it: counts per channel and reason, audited, written to the store when there is one.
  const dropLedger = new InboundDropLedger({
    audit,
    logger,
    ...(o.parley ? { store: o.parley.inboundDrops } : {}),
  });
  const clock = o.clock ?? realClock;
  const store = o.store ?? o.parley?.sessions ?? new MemorySessionStore({ logger });
  const parley = o.parley;
  const history = parley
    ? new ConversationHistory({
        transcripts: parley.transcripts,
        flags: store,
        now: () => clock.now(),
        logger,
      })
    : undefined;
  return {
    name: entry.name,
    settings: channelSettingsOf(entry, o.section ?? {}, o.env ?? {}) as S,
    env: o.env ?? {},
    defaults: {
      approvalMode: o.approvalMode ?? "interactive",
      queueMode: o.queueMode ?? "steer",
      agentName: "default",
      ...(o.rotation ? { rotation: o.rotation } : {}),
    },
    home: o.home ?? mkdtempSync(join(tmpdir(), `parley-${entry.name}-`)),
    logger,
    audit,
    drops: dropLedger.forChannel(entry.name),
    dropLedger,
    clock,
    sessions: o.sessions,
    store,
    pipeline: {
      ...o.pipeline,
      sessions: o.sessions,
      audit,
      logger,
      store,
      clock,
      ...(history ? { history } : {}),
    },
    ...(parley
      ? {
          durable: {
            state: parley,
            staleAfterMs: o.staleAfterMs ?? 15 * 60_000,
            maxAttempts: 3,
            ...(o.ownership ? { ownership: o.ownership } : {}),
          },
        }
      : {}),
    grant: o.grant ?? new AutoApproveGrant({ audit, clock, logger }),
    announce: o.announce ?? (() => {}),
    ...(o.titles ? { titles: o.titles } : {}),
    ...(o.sink ? { sink: o.sink } : {}),
  };
}

/** The real store in a test's data home (close it when the test ends). */
export function openTestStore(home: string, o: { now?: () => number } = {}): Promise<ParleyStore> {
  return openStore(home, o.now ? { now: o.now } : {});
}
