/**
 * AcpProvider: one conversation's agent session, on a process borrowed from an AgentPool
 * (agent-protocols.md). It opens the session (session/new, or session/load to resume one), maps
 * session/update to ProviderEvents in arrival order, relays permission requests, and turns every
 * failure (spawn, garbage, exit, ignored cancel) into an ended turn with a short reason, never a
 * hang. Its session is closed when idle and when the pool needs the slot, and reopened on the next
 * turn (restored with session/load when the agent offers it, else fresh, and it says which).
 * Layer: providers (SDK client side; processes via agent-pool.ts / acp-connection.ts).
 */
import { randomBytes } from "node:crypto";
import { resolve as resolvePath } from "node:path";
import {
  type ContentBlock,
  methods,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionConfigOption,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { realClock, type Timers } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { CompactOutcome, ModelMenu } from "../messaging/session/agent-controls.js";
import { oneLine } from "../messaging/text/clip.js";
import type {
  AvailableCommandsEvent,
  PermissionVerdict,
  ProviderEvent,
} from "../messaging/turn/provider-events.js";
import type { AgentConnection } from "./acp-connection.js";
import { type AgentCapabilities, agentReason, asParleyError, errorText } from "./acp-handshake.js";
import { chooseOutcome, modelMenuOf, toPermissionOptions, UpdateMapper } from "./acp-mapping.js";
import { PooledSession } from "./acp-session.js";
import { Turn, watchSilence } from "./acp-turn.js";
import {
  type AcpProviderOptions,
  DEFAULTS,
  type ProviderLogger,
  STEERING_METHOD,
  toLogFunction,
  withTimeout,
} from "./acp-types.js";
import { AgentPool } from "./agent-pool.js";
import type { PromptContent, Provider } from "./provider.js";

/** ACP has no compaction request: an agent offers it as this advertised slash command. */
export const COMPACT_COMMAND = "compact";
/** How long session/set_config_option may take before setModel gives up waiting. */
export const SET_CONFIG_TIMEOUT_MS = 30_000;
/**
 * claude-agent-acp#551: after session/cancel the next session/prompt answers end_turn at once,
 * empty, and its real answer comes with the prompt after it. An empty end_turn this soon after a
 * prompt that follows a cancel is taken for that bug (a model call takes longer than this).
 */
export const POST_CANCEL_EMPTY_MS = 1_500;

export class AcpProvider implements Provider {
  readonly cwd: string;
  private readonly log: ProviderLogger;
  private readonly timers: Timers;
  private readonly now: () => number;
  private readonly permissionTimeoutMs: number;
  private readonly cancelGraceMs: number;
  private readonly startTimeoutMs: number;
  private readonly killGraceMs: number;
  private readonly silenceMs: number;
  private readonly pool: AgentPool;
  /** The pool is this provider's own (no shared pool given): close() stops its process. */
  private readonly ownsPool: boolean;
  private readonly session: PooledSession;
  private readonly replayContext: AcpProviderOptions["replayContext"];
  private closed = false;
  private turn: Turn | undefined;
  /** True while compact() drains its hidden turn: nobody reads it, so nothing may be steered into it. */
  private compacting = false;
  private settingModel = false;
  private readonly mapper = new UpdateMapper();
  private idleCommands: AvailableCommandsEvent | undefined;
  /** The agent's latest session config options (session/new, then config_option_update). */
  private configOptions: SessionConfigOption[] = [];
  /** Names of the commands the agent last advertised; kept across turns (compaction is one). */
  private commandNames: ReadonlySet<string> = new Set();
  /** The model the user chose: given again to a reopened session that came back on another. */
  private chosenModel: string | undefined;
  /** The last turn on this session was cancelled: the next empty end_turn may be the upstream bug. */
  private afterCancel = false;
  private seq = 0;

  constructor(opts: AcpProviderOptions) {
    this.cwd = resolvePath(opts.cwd ?? process.cwd());
    this.log = toLogFunction(opts.logger);
    this.timers = opts.timers ?? realClock;
    this.now = opts.now ?? Date.now;
    this.permissionTimeoutMs = opts.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs;
    this.cancelGraceMs = opts.cancelGraceMs ?? DEFAULTS.cancelGraceMs;
    this.startTimeoutMs = opts.startTimeoutMs ?? DEFAULTS.startTimeoutMs;
    this.killGraceMs = opts.killGraceMs ?? DEFAULTS.killGraceMs;
    this.silenceMs = opts.silenceNoticeMs ?? DEFAULTS.silenceNoticeMs;
    this.ownsPool = opts.pool === undefined;
    this.replayContext = opts.replayContext;
    this.pool =
      opts.pool ??
      new AgentPool({
        agent: {
          command: opts.command,
          args: opts.args ?? [],
          ...(opts.env ? { env: opts.env } : {}),
          ...(opts.baseEnv ? { baseEnv: opts.baseEnv } : {}),
          cwd: this.cwd,
        },
        maxProcesses: 1,
        maxSessionsPerProcess: 1,
        logger: this.log,
        timers: this.timers,
        startTimeoutMs: this.startTimeoutMs,
        killGraceMs: this.killGraceMs,
        ...(opts.clientInfo ? { clientInfo: opts.clientInfo } : {}),
      });
    this.session = new PooledSession({
      pool: this.pool,
      cwd: this.cwd,
      log: this.log,
      timers: this.timers,
      now: this.now,
      startTimeoutMs: this.startTimeoutMs,
      idleTimeoutMs: opts.idleTimeoutMs ?? 0,
      resumeSessionId: opts.resumeSessionId,
      onSessionId: opts.onSessionId,
      ...(opts.mcpServers ? { mcpServers: opts.mcpServers } : {}),
      handlers: {
        onUpdate: (params, replay) => this.applyUpdate(params, replay),
        onPermission: (params, signal) => this.onPermission(params, signal),
        onLost: (error) => {
          const turn = this.turn;
          if (turn && !turn.finished) this.endTurnOnError(turn, error);
        },
        onOpened: async (configOptions) => {
          this.configOptions = configOptions;
          await this.reapplyModel();
        },
        busy: () => (this.turn !== undefined && !this.turn.finished) || this.compacting || this.settingModel,
      },
    });
  }

  /** The pid of the agent process this session is (or was last) on. */
  get pid(): number | undefined {
    return this.session.pid;
  }

  /** The agent session id: the current one, else the one the next turn resumes. */
  get agentSessionId(): string | undefined {
    return this.session.agentSessionId;
  }

  /** True while the session holds a slot on an agent process. */
  get isAttached(): boolean {
    return this.session.isAttached;
  }

  private get caps(): AgentCapabilities | undefined {
    return this.session.capabilities;
  }

  get supportsSteer(): boolean {
    return this.caps?.steering ?? false;
  }

  /** What the agent declared its prompts may carry (all false until an agent process started). */
  get promptCapabilities(): Readonly<AgentCapabilities["promptCapabilities"]> {
    return this.caps?.promptCapabilities ?? { image: false, audio: false, embeddedContext: false };
  }

  get contextUsagePct(): number | undefined {
    return this.usagePct;
  }
  private usagePct: number | undefined;

  hasActiveTurn(): boolean {
    const turn = this.turn;
    return turn !== undefined && !turn.requestSettled && !turn.finished;
  }

  /**
   * Opens the agent session now when a slot is free (or an idle one can be reclaimed). When every
   * slot is busy mid-turn it returns without one: the first prompt then waits in line visibly
   * (`agent_wait`) instead of the caller waiting invisibly here.
   */
  async start(): Promise<void> {
    if (this.closed) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    await this.session.ensure(false);
  }

  prompt(content: PromptContent[] | string): AsyncIterable<ProviderEvent> {
    return this.runTurn(content);
  }

  answerPermission(requestId: string, verdict: PermissionVerdict): void {
    if (!this.turn?.answerPermission(requestId, verdict)) {
      this.log("debug", "permission answer for an unknown or settled request", { requestId });
    }
  }

  cancel(opts: { waitAckTimeout?: number } = {}): Promise<boolean> {
    const turn = this.turn;
    if (!turn || turn.finished) return Promise.resolve(true);
    turn.cancelPromise ??= this.doCancel(turn, opts.waitAckTimeout ?? this.cancelGraceMs);
    return turn.cancelPromise;
  }

  async steer(text: string): Promise<boolean> {
    const turn = this.turn;
    const connection = this.session.connection;
    const sessionId = this.session.sessionId;
    // The idle guard: a steer outside a running turn could start an orphan turn nobody reads.
    if (!this.supportsSteer || !connection || !turn || !this.hasActiveTurn() || turn.cancelRequested)
      return false;
    // A message folded into a compaction would vanish into a turn nobody sees: it queues instead.
    if (this.compacting) return false;
    try {
      const res = await connection.client.agent.request<unknown>(STEERING_METHOD, {
        sessionId,
        prompt: [{ type: "text", text }],
        _meta: { steering: { idleBehavior: "promptRequired" } },
      });
      const outcome = typeof res === "object" && res !== null && "outcome" in res ? res.outcome : undefined;
      if (outcome !== "injected") {
        this.log("info", "steer not injected", { outcome: String(outcome) });
        return false;
      }
      const id = `steer-${++this.seq}`;
      const summary = oneLine(text, 80);
      this.afterDispatch(() => turn.push({ type: "steer_consumed", id, summary }));
      return true;
    } catch (err) {
      this.log("warn", "steer request failed", { error: errorText(err) });
      return false;
    }
  }

  /** Ends a running turn as cancelled and closes the session; a private pool's process is stopped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.session.markClosed();
    const turn = this.turn;
    if (turn && !turn.finished) {
      turn.hardStopped = true;
      this.log("info", "provider closed mid-turn; ending the turn as cancelled");
      const connection = this.session.connection;
      // A shared process lives on: the agent must stop the turn too (session/close may not exist).
      if (connection?.alive && turn.sent && !turn.requestSettled) {
        connection.client.agent
          .notify(methods.agent.session.cancel, { sessionId: this.session.sessionId as string })
          .catch((err: unknown) =>
            this.log("debug", "session/cancel at close failed", { error: errorText(err) }),
          );
      }
      turn.complete("cancelled");
    }
    if (this.ownsPool) {
      this.session.forget();
      await this.pool.close();
    } else {
      await this.session.detach("closed");
    }
  }

  // ---- agent controls: model selector and compaction -------------------------------------------

  /** The agent's model selector (first select config option of category "model"), if any. */
  modelMenu(): ModelMenu | undefined {
    return modelMenuOf(this.configOptions);
  }

  /** Sets the model via session/set_config_option; resolves with the menu as the agent answered it. */
  async setModel(optionId: string): Promise<ModelMenu> {
    this.settingModel = true;
    try {
      if (this.closed) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
      await this.session.ensure(true);
      const menu = await this.applyModel(optionId);
      this.chosenModel = optionId;
      return menu;
    } finally {
      this.settingModel = false;
      this.session.touch();
    }
  }

  private async applyModel(optionId: string): Promise<ModelMenu> {
    const connection = this.session.connection;
    const sessionId = this.session.sessionId;
    if (this.closed || !connection || !sessionId)
      throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    const menu = this.modelMenu();
    if (!menu) throw new ParleyError("REFUSED", "the agent does not offer a model selector");
    if (!menu.options.some((o) => o.id === optionId)) {
      throw new ParleyError("REFUSED", "that model is not one the agent offers");
    }
    const answered = connection.client.agent
      .request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: menu.configId,
        value: optionId,
      })
      .then(
        (res) => {
          const options: unknown = res?.configOptions;
          if (!Array.isArray(options)) {
            throw new ParleyError(
              "PROVIDER_PROTOCOL",
              "agent answered session/set_config_option without configOptions",
            );
          }
          // On the ordered chain, after every update received before this answer: the answer is newest.
          return new Promise<ModelMenu | undefined>((resolve) =>
            connection.afterDispatch(() => {
              this.configOptions = options as SessionConfigOption[];
              resolve(this.modelMenu());
            }),
          );
        },
        (err: unknown) => {
          throw connection.lost ?? asParleyError(err, "agent rejected the model change");
        },
      );
    // A late answer is still applied above (the agent's state is the truth); only the wait is bounded.
    // A late failure has no caller left to tell, so it is logged rather than left unhandled.
    answered.catch((err: unknown) =>
      this.log("debug", "model change answer failed", { error: errorText(err) }),
    );
    const after = await withTimeout(
      answered.then((m) => ({ menu: m })),
      SET_CONFIG_TIMEOUT_MS,
      this.timers,
    );
    if (!after) {
      throw new ParleyError(
        "PROVIDER_TIMEOUT",
        `agent did not answer session/set_config_option within ${SET_CONFIG_TIMEOUT_MS} ms`,
      );
    }
    if (!after.menu) throw new ParleyError("PROVIDER_PROTOCOL", "agent no longer reports a model selector");
    this.log("info", "agent model set", { current: after.menu.current });
    return after.menu;
  }

  /** True when the agent advertised a `compact` command (ACP has no compaction request). */
  supportsCompaction(): boolean {
    return this.commandNames.has(COMPACT_COMMAND);
  }

  /**
   * Runs the agent's compaction: a `/compact` prompt whose events are drained, not rendered. Rejects
   * (REFUSED) while a turn runs or when the agent offers none; resolves ok only on end_turn.
   */
  async compact(): Promise<CompactOutcome> {
    if (this.closed) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    if (this.turn && !this.turn.finished) {
      throw new ParleyError("REFUSED", "a turn is already running on this agent session");
    }
    if (!this.supportsCompaction()) throw new ParleyError("REFUSED", "the agent does not offer compaction");
    let stopReason: string | undefined;
    let reportedUsage = false;
    this.compacting = true;
    try {
      for await (const event of this.runTurn(`/${COMPACT_COMMAND}`)) {
        if (event.type === "complete") stopReason = event.stopReason;
        else if (event.type === "usage") reportedUsage = true;
        // Nobody sees this turn, so a command list it carries waits for the next visible turn.
        else if (event.type === "available_commands") this.idleCommands = event;
        // Nobody can answer here either: a tool the compaction wants to run is refused at once.
        else if (event.type === "permission_request") this.answerPermission(event.requestId, "deny");
        // A resume notice belongs to the next turn the user sees.
        else if (event.type === "session_resume") this.session.keepNotice(event);
      }
    } catch (err) {
      if (err instanceof ParleyError && err.code === "REFUSED") throw err;
      // The agent died under the compaction: thrown, so the caller replaces it.
      if (err instanceof ParleyError && err.code === "PROVIDER_EXITED") throw err;
      return { ok: false, error: asParleyError(err, "compaction failed").message };
    } finally {
      this.compacting = false;
    }
    if (stopReason !== "end_turn") {
      return {
        ok: false,
        error:
          stopReason === "cancelled"
            ? "the compaction was cancelled"
            : `the agent ended the compaction with ${stopReason ?? "no stop reason"}`,
      };
    }
    // Only a figure reported during the compaction describes the compacted context.
    const pct = reportedUsage ? this.usagePct : undefined;
    return pct === undefined ? { ok: true } : { ok: true, contextUsagePct: pct };
  }

  /** A model chosen earlier is given again to a reopened session that came back on another one. */
  private async reapplyModel(): Promise<void> {
    const chosen = this.chosenModel;
    if (chosen === undefined || this.modelMenu()?.current === chosen) return;
    try {
      await this.applyModel(chosen);
    } catch (err) {
      this.log("warn", "could not give the reopened session its model again", { error: errorText(err) });
    }
  }

  // ---- turns -----------------------------------------------------------------------------------

  private async *runTurn(content: PromptContent[] | string): AsyncGenerator<ProviderEvent> {
    if (this.closed) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    if (this.turn && !this.turn.finished) {
      throw new ParleyError("REFUSED", "a turn is already running on this agent session");
    }
    const turn = new Turn(this.now);
    this.turn = turn;
    this.session.pauseIdle();
    this.mapper.newTurn();
    void turn.done.then(() => {
      if (this.turn === turn) this.turn = undefined;
      this.afterCancel = turn.cancelRequested;
      this.session.turnEnded();
    });
    void this.beginTurn(turn, toBlocks(content));
    try {
      yield* turn.drain();
    } finally {
      // A consumer that stops reading must not leave the agent running a turn nobody sees.
      if (!turn.finished) {
        this.log("info", "prompt iterable abandoned mid-turn; cancelling");
        await this.cancel();
      }
    }
  }

  /** Inside the turn: waiting for a slot and reopening the session are visible to its reader. */
  private async beginTurn(turn: Turn, prompt: ContentBlock[]): Promise<void> {
    let blocks = prompt;
    try {
      await this.session.ensure(true, (position) => turn.notice({ type: "agent_wait", position }));
    } catch (err) {
      turn.fail(asParleyError(err, "agent failed to start"));
      return;
    }
    if (turn.finished) return; // cancelled or closed while it waited
    const notices = this.session.takeNotices();
    // A fresh session is given the conversation's last messages, and the chat is told how many.
    let replayed = 0;
    if (notices.some((n) => n.type === "session_resume" && n.outcome === "fresh")) {
      ({ blocks, replayed } = await this.withReplay(blocks));
      if (turn.finished) return;
    }
    for (const notice of notices)
      turn.notice(
        notice.type === "session_resume" && notice.outcome === "fresh" && replayed > 0
          ? { ...notice, replayed }
          : notice,
      );
    // Commands the agent announced while idle (typically right after session/new).
    if (this.idleCommands) turn.push(this.idleCommands);
    this.idleCommands = undefined;
    this.sendPrompt(turn, blocks);
  }

  /** The conversation's earlier messages ahead of the prompt (the session that knew them is gone). */
  private async withReplay(blocks: ContentBlock[]): Promise<{ blocks: ContentBlock[]; replayed: number }> {
    let context: { text: string; messages: number } | undefined;
    try {
      context = await this.replayContext?.();
    } catch (err) {
      this.log("warn", "could not read the conversation to replay", { error: errorText(err) });
    }
    return context
      ? { blocks: [{ type: "text", text: context.text }, ...blocks], replayed: context.messages }
      : { blocks, replayed: 0 };
  }

  private sendPrompt(turn: Turn, blocks: ContentBlock[]): void {
    const connection = this.session.connection;
    const sessionId = this.session.sessionId;
    if (!connection || !sessionId) {
      turn.fail(new ParleyError("PROVIDER_EXITED", "the agent session closed before the prompt"));
      return;
    }
    turn.sent = true;
    turn.requestSettled = false;
    turn.sentAt = this.now();
    turn.lastActivityAt = turn.sentAt;
    watchSilence(turn, this.silenceMs, this.timers, this.now);
    connection.client.agent.request(methods.agent.session.prompt, { sessionId, prompt: blocks }).then(
      (res) => {
        turn.requestSettled = true;
        connection.afterDispatch(() => this.onPromptAnswered(turn, res.stopReason, blocks));
      },
      (err: unknown) => {
        turn.requestSettled = true;
        void this.onPromptFailed(turn, err, connection);
      },
    );
  }

  private onPromptAnswered(turn: Turn, stopReason: string, blocks: ContentBlock[]): void {
    if (turn.finished) return;
    const bug =
      this.afterCancel &&
      stopReason === "end_turn" &&
      !turn.contentSeen &&
      !turn.cancelRequested &&
      !turn.recovered &&
      this.now() - turn.sentAt < POST_CANCEL_EMPTY_MS;
    if (bug) {
      void this.recoverAfterCancel(turn, blocks);
      return;
    }
    turn.complete(stopReason);
  }

  /**
   * The upstream post-cancel bug: the prompt's real answer is still inside the agent and would come
   * out as the answer to the NEXT prompt. Re-sending the prompt would only shift it again, so the
   * session is reopened (session/close, then session/load: the agent rebuilds it from its own
   * transcript, with nothing stale queued) and the prompt is sent once more on the clean session.
   */
  private async recoverAfterCancel(turn: Turn, blocks: ContentBlock[]): Promise<void> {
    turn.recovered = true;
    turn.requestSettled = false;
    this.afterCancel = false;
    this.log("warn", "empty end_turn right after a cancel (claude-agent-acp#551); reopening the session", {
      sessionId: this.session.sessionId,
    });
    try {
      if (!this.session.isAttached)
        throw new ParleyError("PROVIDER_EXITED", "the agent session closed during recovery");
      await this.session.detach("post_cancel");
      await this.session.ensure(true);
      if (turn.finished) return;
      // The reopened session is this turn's own business: only a fresh start is news to the user.
      for (const notice of this.session.takeNotices()) {
        if (notice.type !== "session_resume" || notice.outcome === "fresh") turn.notice(notice);
      }
      this.sendPrompt(turn, blocks);
    } catch (err) {
      this.endTurnOnError(turn, asParleyError(err, "could not recover the session after a cancel"));
    }
  }

  private async onPromptFailed(turn: Turn, err: unknown, connection: AgentConnection): Promise<void> {
    // The connection dropped: the exit handler reports why; wait for it rather than guess.
    const lost =
      turn.cancelRequested || turn.hardStopped
        ? connection.lost
        : await connection.lossCause(this.killGraceMs);
    const error =
      lost ??
      (err instanceof ParleyError
        ? err
        : new ParleyError("PROVIDER_PROTOCOL", `agent failed the turn: ${agentReason(err)}`, { cause: err }));
    this.log("info", "prompt failed", { error: errorText(err) });
    connection.afterDispatch(() => this.endTurnOnError(turn, error));
  }

  private endTurnOnError(turn: Turn, error: ParleyError): void {
    if (turn.finished) return;
    // ACP: an error after session/cancel counts as a cancelled turn.
    if (turn.cancelRequested) {
      this.log("info", "turn ended by an error after cancel; reporting cancelled", { error: error.message });
      turn.complete("cancelled");
      return;
    }
    turn.fail(error);
  }

  private async doCancel(turn: Turn, waitAckTimeout: number): Promise<boolean> {
    turn.cancelRequested = true;
    if (!turn.sent) {
      // Still waiting for an agent: nothing reached one, so there is nothing to stop.
      turn.complete("cancelled");
      return true;
    }
    const connection = this.session.connection;
    if (connection && !turn.requestSettled) {
      // Not awaited: an agent that stopped reading stdin must not stall the cancel budget.
      connection.client.agent
        .notify(methods.agent.session.cancel, { sessionId: this.session.sessionId as string })
        .catch((err: unknown) =>
          this.log("warn", "session/cancel could not be sent", { error: errorText(err) }),
        );
    }
    turn.cancelPermissions();
    if (
      await withTimeout(
        turn.done.then(() => true),
        waitAckTimeout,
        this.timers,
      )
    )
      return true;
    const reason = `agent did not end the turn within ${waitAckTimeout} ms of session/cancel`;
    turn.hardStopped = true;
    turn.complete("cancelled");
    const pid = this.session.pid;
    if (!this.session.isAttached) return false;
    if (this.ownsPool || this.session.sessionsOnProcess() <= 1) {
      // Its own process: stopping it harms nobody else, and the next turn gets a fresh one.
      this.log("warn", `${reason}; hard-stopping it`, { pid });
      await this.session.kill();
    } else {
      // Co-tenants share the process: only this session is abandoned (closed), the process lives.
      this.log("warn", `${reason}; abandoning the session, its process serves others`, { pid });
      await this.session.detach("agent_exited");
    }
    return false;
  }

  // ---- inbound from the agent ------------------------------------------------------------------

  private applyUpdate(params: SessionNotification, replay: boolean): void {
    const mapped = this.mapper.map(params.update);
    if (mapped.contextUsagePct !== undefined) this.usagePct = mapped.contextUsagePct;
    if (mapped.configOptions) this.configOptions = mapped.configOptions;
    if (mapped.ignored) this.log("debug", "session update ignored", { kind: mapped.ignored });
    const turn = this.turn;
    for (const event of mapped.events) {
      // Remembered for supportsCompaction(), whether or not a turn is there to forward the list to.
      if (event.type === "available_commands") this.commandNames = new Set(event.commands.map((c) => c.name));
      // session/load replays the history: state above, never output of the turn now running.
      if (replay) continue;
      if (turn?.sent && !turn.finished) turn.push(event);
      else if (event.type === "available_commands") this.idleCommands = event;
      else this.log("debug", "update outside a turn dropped", { type: event.type });
    }
  }

  private async onPermission(
    params: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<RequestPermissionResponse> {
    const turn = this.turn;
    if (!turn || turn.finished || turn.cancelRequested) {
      return { outcome: { outcome: "cancelled" } };
    }
    const requestId = `perm-${++this.seq}-${randomBytes(3).toString("hex")}`;
    const verdict = await new Promise<PermissionVerdict>((resolve) => {
      let settled = false;
      const settle = (v: PermissionVerdict): void => {
        if (settled) return;
        settled = true;
        this.timers.clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        turn.removePermission(requestId);
        resolve(v);
      };
      // parley's own deadline (ACP defines none): silence must never approve, so it rejects.
      const timer = this.timers.setTimeout(() => {
        this.log("warn", "permission request unanswered; rejecting", {
          requestId,
          timeoutMs: this.permissionTimeoutMs,
        });
        settle("deny");
      }, this.permissionTimeoutMs);
      const onAbort = (): void => settle("cancelled");
      signal.addEventListener("abort", onAbort, { once: true });
      turn.addPermission(requestId, settle);
      // After dispatch, so the tool_call update that announced this tool is emitted first.
      this.afterDispatch(() => {
        const info = this.mapper.toolInfo(params.toolCall);
        turn.push({
          type: "permission_request",
          requestId,
          toolCallId: params.toolCall.toolCallId,
          title: info.title,
          kind: info.kind,
          options: toPermissionOptions(params.options),
        });
      });
    });
    const outcome = chooseOutcome(params.options, verdict);
    this.log("info", "permission answered", {
      requestId,
      verdict,
      optionId: outcome.outcome === "selected" ? outcome.optionId : "cancelled",
    });
    return { outcome };
  }

  private afterDispatch(step: () => void): void {
    const connection = this.session.connection;
    if (connection) connection.afterDispatch(step);
    else setImmediate(step);
  }
}

function toBlocks(content: PromptContent[] | string): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((c): ContentBlock => ({ ...c }));
}
