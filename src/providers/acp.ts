/**
 * AcpProvider: one ACP agent subprocess bound to one session (agent-protocols.md). It starts the
 * agent and its session, maps session/update to ProviderEvents in arrival order, relays permission requests,
 * and turns every failure (spawn, garbage, exit, ignored cancel) into an ended turn, never a hang.
 * Layer: providers (SDK client side + node:child_process via acp-process.ts).
 */
import { randomBytes } from "node:crypto";
import { stat } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import {
  type ClientConnection,
  type ContentBlock,
  client,
  methods,
  ndJsonStream,
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
import { asParleyError, errorText, type HandshakeResult, handshake } from "./acp-handshake.js";
import { chooseOutcome, modelMenuOf, toPermissionOptions, UpdateMapper } from "./acp-mapping.js";
import { AgentProcess } from "./acp-process.js";
import { Turn } from "./acp-turn.js";
import {
  type AcpProviderOptions,
  DEFAULTS,
  type ProviderLogger,
  STEERING_METHOD,
  toLogFunction,
  withTimeout,
} from "./acp-types.js";
import type { PromptContent, Provider } from "./provider.js";

/** ACP has no compaction request: an agent offers it as this advertised slash command. */
export const COMPACT_COMMAND = "compact";
/** How long session/set_config_option may take before setModel gives up waiting. */
export const SET_CONFIG_TIMEOUT_MS = 30_000;

export class AcpProvider implements Provider {
  readonly cwd: string;
  private readonly opts: AcpProviderOptions;
  private readonly log: ProviderLogger;
  private readonly timers: Timers;
  private readonly permissionTimeoutMs: number;
  private readonly cancelGraceMs: number;
  private readonly killGraceMs: number;
  private proc: AgentProcess | undefined;
  private conn: ClientConnection | undefined;
  private sessionId: string | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** First fatal condition; once set the provider is unusable (a new one must be spawned). */
  private fatal: ParleyError | undefined;
  private failStart: ((error: ParleyError) => void) | undefined;
  private turn: Turn | undefined;
  /** True while compact() drains its hidden turn: nobody reads it, so nothing may be steered into it. */
  private compacting = false;
  private readonly mapper = new UpdateMapper();
  /** The SDK runs notification handlers concurrently; this chain applies them in arrival order. */
  private updateChain: Promise<void> = Promise.resolve();
  private idleCommands: AvailableCommandsEvent | undefined;
  /** The agent's latest session config options (session/new, then config_option_update). */
  private configOptions: SessionConfigOption[] = [];
  /** Names of the commands the agent last advertised; kept across turns (compaction is one). */
  private commandNames: ReadonlySet<string> = new Set();
  private steering = false;
  private promptCaps: HandshakeResult["promptCapabilities"] = {
    image: false,
    audio: false,
    embeddedContext: false,
  };
  private usagePct: number | undefined;
  private seq = 0;

  constructor(opts: AcpProviderOptions) {
    this.opts = opts;
    this.cwd = resolvePath(opts.cwd ?? process.cwd());
    this.log = toLogFunction(opts.logger);
    this.timers = opts.timers ?? realClock;
    this.permissionTimeoutMs = opts.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs;
    this.cancelGraceMs = opts.cancelGraceMs ?? DEFAULTS.cancelGraceMs;
    this.killGraceMs = opts.killGraceMs ?? DEFAULTS.killGraceMs;
  }

  /** The agent's pid once spawned (for supervision and zombie checks). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get supportsSteer(): boolean {
    return this.steering;
  }

  /** What the agent declared its prompts may carry (all false until the handshake finished). */
  get promptCapabilities(): Readonly<HandshakeResult["promptCapabilities"]> {
    return this.promptCaps;
  }

  get contextUsagePct(): number | undefined {
    return this.usagePct;
  }

  hasActiveTurn(): boolean {
    const turn = this.turn;
    return turn !== undefined && !turn.requestSettled && !turn.finished;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart();
    return this.starting;
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
    const conn = this.conn;
    // The idle guard: a steer outside a running turn could start an orphan turn nobody reads.
    if (!this.steering || !conn || !turn || !this.hasActiveTurn() || turn.cancelRequested) return false;
    // A message folded into a compaction would vanish into a turn nobody sees: it queues instead.
    if (this.compacting) return false;
    try {
      const res = await conn.agent.request<unknown>(STEERING_METHOD, {
        sessionId: this.sessionId,
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

  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  // ---- agent controls: model selector and compaction -------------------------------------------

  /** The agent's model selector (first select config option of category "model"), if any. */
  modelMenu(): ModelMenu | undefined {
    return modelMenuOf(this.configOptions);
  }

  /** Sets the model via session/set_config_option; resolves with the menu as the agent answered it. */
  async setModel(optionId: string): Promise<ModelMenu> {
    await this.start();
    const conn = this.conn;
    const sessionId = this.sessionId;
    if (this.fatal) throw this.fatal;
    if (this.closing || !conn || !sessionId) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    const menu = this.modelMenu();
    if (!menu) throw new ParleyError("REFUSED", "the agent does not offer a model selector");
    if (!menu.options.some((o) => o.id === optionId)) {
      throw new ParleyError("REFUSED", "that model is not one the agent offers");
    }
    const answered = conn.agent
      .request(methods.agent.session.setConfigOption, { sessionId, configId: menu.configId, value: optionId })
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
            this.afterDispatch(() => {
              this.configOptions = options as SessionConfigOption[];
              resolve(this.modelMenu());
            }),
          );
        },
        (err: unknown) => {
          throw this.fatal ?? asParleyError(err, "agent rejected the model change");
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
    if (this.fatal) throw this.fatal;
    if (this.closing) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
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
      }
    } catch (err) {
      if (err instanceof ParleyError && err.code === "REFUSED") throw err;
      // The agent died under the compaction: thrown, so the caller replaces it.
      if (this.fatal) throw this.fatal;
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

  // ---- lifecycle -------------------------------------------------------------------------------

  private async doStart(): Promise<void> {
    if (this.closing) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    // Checked first: a missing cwd makes spawn report ENOENT, which reads as "command not found".
    const isDir = await stat(this.cwd).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      this.fatal = new ParleyError(
        "PROVIDER_SPAWN_FAILED",
        `agent working directory does not exist: ${this.cwd}`,
      );
      throw this.fatal;
    }
    if (this.closing) throw new ParleyError("PROVIDER_EXITED", "provider closed during startup");
    let proc: AgentProcess;
    try {
      proc = new AgentProcess({
        command: this.opts.command,
        args: this.opts.args ?? [],
        env: this.opts.env,
        ...(this.opts.baseEnv ? { baseEnv: this.opts.baseEnv } : {}),
        cwd: this.cwd,
        logger: this.log,
        onFatal: (error) => this.onFatal(error),
      });
    } catch (err) {
      // spawn throws synchronously for invalid arguments (e.g. a NUL byte in an arg).
      this.fatal = new ParleyError("PROVIDER_SPAWN_FAILED", `could not start agent "${this.opts.command}"`, {
        cause: err,
      });
      throw this.fatal;
    }
    this.proc = proc;
    this.conn = client({ name: "parley" })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
        this.onPermission(params, signal),
      )
      .onNotification(methods.client.session.update, ({ params }) => this.onUpdate(params))
      .connect(ndJsonStream(proc.stdin, proc.stdout));
    const guard = new Promise<never>((_, reject) => {
      this.failStart = reject;
      if (this.fatal) reject(this.fatal);
    });
    const startTimeoutMs = this.opts.startTimeoutMs ?? DEFAULTS.startTimeoutMs;
    const timer = this.timers.setTimeout(
      () =>
        this.failStart?.(
          new ParleyError("PROVIDER_TIMEOUT", `agent did not finish its handshake in ${startTimeoutMs} ms`),
        ),
      startTimeoutMs,
    );
    try {
      const clientInfo = this.opts.clientInfo ?? { name: "parley", version: "0.1.0" };
      const session = await Promise.race([handshake(this.conn, this.cwd, clientInfo), guard]);
      this.sessionId = session.sessionId;
      this.steering = session.steering;
      this.promptCaps = session.promptCapabilities;
      // Set together with sessionId: from here on config_option_update (on the chain) supersedes it.
      this.configOptions = session.configOptions;
      this.log("info", "agent session started", {
        pid: proc.pid,
        agent: session.agentName,
        steering: this.steering,
      });
    } catch (err) {
      // A closed connection is a symptom; wait briefly for the exit or spawn error that caused it.
      if (!(err instanceof ParleyError)) await withTimeout(proc.exited, 500);
      const error = this.fatal ?? asParleyError(err, "agent handshake failed");
      this.fatal ??= error;
      this.log("error", "agent failed to start", { command: this.opts.command, error: error.message });
      this.conn.close();
      await proc.terminate(this.killGraceMs);
      throw error;
    } finally {
      this.timers.clearTimeout(timer);
      this.failStart = undefined;
    }
  }

  private async doClose(): Promise<void> {
    const turn = this.turn;
    if (turn && !turn.finished) {
      turn.hardStopped = true;
      this.log("info", "provider closed mid-turn; ending the turn as cancelled");
      turn.complete("cancelled");
    }
    this.failStart?.(new ParleyError("PROVIDER_EXITED", "provider closed during startup"));
    this.conn?.close();
    await this.proc?.terminate(this.killGraceMs);
  }

  /** Spawn failure, non-JSON stdout or process exit: the provider is unusable from here on. */
  private onFatal(error: ParleyError): void {
    if (this.closing || this.fatal) {
      this.log("debug", "agent stopped", { reason: error.message });
      return;
    }
    this.fatal = error;
    this.log("error", "agent failed", { code: error.code, error: error.message });
    this.failStart?.(error);
    const turn = this.turn;
    if (error.code !== "PROVIDER_EXITED") void this.proc?.terminate(this.killGraceMs);
    if (!turn || turn.finished) return;
    // Let output the agent wrote before dying reach the turn first (stdout may lag the exit event).
    const flushed = error.code === "PROVIDER_EXITED" && this.conn ? this.conn.closed : Promise.resolve();
    void withTimeout(flushed, 1_000).then(() => this.afterDispatch(() => this.endTurnOnError(turn, error)));
  }

  // ---- turns -----------------------------------------------------------------------------------

  private async *runTurn(content: PromptContent[] | string): AsyncGenerator<ProviderEvent> {
    await this.start();
    const conn = this.conn;
    const sessionId = this.sessionId;
    if (this.fatal) throw this.fatal;
    if (this.closing || !conn || !sessionId) throw new ParleyError("PROVIDER_EXITED", "provider is closed");
    if (this.turn && !this.turn.finished) {
      throw new ParleyError("REFUSED", "a turn is already running on this agent session");
    }
    const turn = new Turn();
    this.turn = turn;
    this.mapper.newTurn();
    // Commands the agent announced while idle (typically right after session/new).
    if (this.idleCommands) turn.push(this.idleCommands);
    this.idleCommands = undefined;
    void turn.done.then(() => {
      if (this.turn === turn) this.turn = undefined;
    });
    conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: toBlocks(content) }).then(
      (res) => {
        turn.requestSettled = true;
        this.afterDispatch(() => turn.complete(res.stopReason));
      },
      (err: unknown) => {
        turn.requestSettled = true;
        void this.onPromptFailed(turn, err);
      },
    );
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

  private async onPromptFailed(turn: Turn, err: unknown): Promise<void> {
    if (!turn.cancelRequested && !turn.hardStopped && this.conn?.signal.aborted && this.proc) {
      // The connection dropped: the exit handler reports why; wait for it rather than guess.
      await withTimeout(this.proc.exited, this.killGraceMs);
    }
    const error =
      this.fatal ??
      (this.conn?.signal.aborted
        ? new ParleyError("PROVIDER_EXITED", "agent closed its output mid-turn", { cause: err })
        : asParleyError(err, "agent failed the turn"));
    this.afterDispatch(() => this.endTurnOnError(turn, error));
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
    if (this.conn && this.sessionId && !turn.requestSettled) {
      // Not awaited: an agent that stopped reading stdin must not stall the cancel budget.
      this.conn.agent
        .notify(methods.agent.session.cancel, { sessionId: this.sessionId })
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
    this.log("warn", `${reason}; hard-stopping it`, { pid: this.proc?.pid });
    this.fatal ??= new ParleyError("PROVIDER_EXITED", `agent was stopped: ${reason}`);
    turn.hardStopped = true;
    turn.complete("cancelled");
    this.conn?.close();
    await this.proc?.terminate(this.killGraceMs);
    return false;
  }

  // ---- inbound from the agent ------------------------------------------------------------------

  private onUpdate(params: SessionNotification): void {
    this.enqueue(() => this.applyUpdate(params));
  }

  private applyUpdate(params: SessionNotification): void {
    if (params.sessionId !== this.sessionId) {
      this.log("debug", "update for another session dropped", { sessionId: params.sessionId });
      return;
    }
    const mapped = this.mapper.map(params.update);
    if (mapped.contextUsagePct !== undefined) this.usagePct = mapped.contextUsagePct;
    if (mapped.configOptions) this.configOptions = mapped.configOptions;
    if (mapped.ignored) this.log("debug", "session update ignored", { kind: mapped.ignored });
    const turn = this.turn;
    for (const event of mapped.events) {
      // Remembered for supportsCompaction(), whether or not a turn is there to forward the list to.
      if (event.type === "available_commands") this.commandNames = new Set(event.commands.map((c) => c.name));
      if (turn && !turn.finished) turn.push(event);
      else if (event.type === "available_commands") this.idleCommands = event;
      else this.log("debug", "update outside a turn dropped", { type: event.type });
    }
  }

  private async onPermission(
    params: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<RequestPermissionResponse> {
    const turn = this.turn;
    if (params.sessionId !== this.sessionId || !turn || turn.finished || turn.cancelRequested) {
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

  // ---- ordering helpers ------------------------------------------------------------------------

  private enqueue(step: () => void): void {
    this.updateChain = this.updateChain.then(step).catch((err: unknown) => {
      this.log("error", "applying an agent update failed", { error: errorText(err) });
    });
  }

  /**
   * Runs `step` after every message already received has been applied. The SDK dispatches each
   * message through a chain of async handlers, so a response can overtake the notifications sent
   * before it by a few microtasks; one macrotask lets all of those land on the update chain first.
   */
  private afterDispatch(step: () => void): void {
    setImmediate(() => this.enqueue(step));
  }
}

function toBlocks(content: PromptContent[] | string): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((c): ContentBlock => ({ ...c }));
}
