/**
 * ScriptedProvider: replays scripted event lists as provider turns, for tests and golden transcripts.
 * Steps may carry a delay (on injected timers); a permission request waits for the driver's answer
 * and may branch on it, so approve and deny paths are both scriptable. Honours cancel and steer.
 * Optionally scripts the agent controls (a model menu, setModel, compaction) without a subprocess.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Timers } from "../messaging/base/clock.js";
import { realClock, sleep } from "../messaging/base/clock.js";
import { ParleyError } from "../messaging/base/errors.js";
import type { AgentPromptCapabilities } from "../messaging/files/prompt-blocks.js";
import type { AgentControls, CompactOutcome, ModelMenu } from "../messaging/session/agent-controls.js";
import type { PermissionVerdict, ProviderEvent } from "../messaging/turn/provider-events.js";
import type { PromptContent, Provider } from "./provider.js";

export type ScriptStep =
  | ProviderEvent
  | { delayMs: number; event?: ProviderEvent }
  | { throws: string }
  /** Anything, to exercise the driver's malformed-event path. */
  | { raw: unknown };

export interface ScriptedTurn {
  steps: ScriptStep[];
  /** After a permission request is answered, these steps follow (keyed by verdict). */
  onPermission?: Partial<Record<PermissionVerdict, ScriptStep[]>>;
}

export interface ScriptedProviderOptions {
  timers?: Timers;
  supportsSteer?: boolean;
  /** Each steer is acknowledged by this event (default: a typed steer_consumed). */
  steerEvent?: (text: string, n: number) => ProviderEvent | null;
  /** When true, cancel() is ignored (an agent that never acks), exercising the hard-stop path. */
  ignoreCancel?: boolean;
  cwd?: string;
  /** The model selector this agent advertises; omitted = none (modelMenu() is undefined). */
  modelMenu?: ModelMenu;
  /**
   * What the agent answers to setModel (the menu it reports afterwards). Throw or reject to make it
   * fail. Default: the chosen id becomes current.
   */
  setModel?: (optionId: string, menu: ModelMenu) => ModelMenu | Promise<ModelMenu>;
  /** Compaction support; omitted = the agent offers none. */
  compaction?: ScriptedCompaction;
  /** Which non-text blocks this agent accepts (default: none, so files arrive as links). */
  promptCapabilities?: AgentPromptCapabilities;
  /** start() fails with this reason (an agent that cannot be started or given a session). */
  startError?: string;
}

export interface ScriptedCompaction {
  /** Waited on the injected timers before the outcome (a compaction that takes time). */
  delayMs?: number;
  /** The outcome (default { ok: true }); a reported contextUsagePct also becomes contextUsagePct. */
  outcome?: CompactOutcome;
  /** Make compact() reject with this message instead (the agent failed outright). */
  throws?: string;
}

export class ScriptedProvider implements Provider, AgentControls {
  readonly prompts: (string | PromptContent[])[] = [];
  /** Every option id setModel was called with, in order. */
  readonly modelChoices: string[] = [];
  /** How many times compact() started a compaction. */
  compactions = 0;
  private compacting = false;
  readonly answers: { requestId: string; verdict: PermissionVerdict }[] = [];
  readonly steers: string[] = [];
  /**
   * Per prompt: what each file:// resource link held AT prompt time (null: already gone). A turn's
   * files must be alive while the agent reads them; reading later would prove nothing.
   */
  readonly linkedFiles: Map<string, Buffer | null>[] = [];
  promptCapabilities: AgentPromptCapabilities;
  started = false;
  closed = false;
  readonly supportsSteer: boolean;
  readonly cwd: string;
  contextUsagePct: number | undefined = undefined;
  private readonly turns: ScriptedTurn[];
  private readonly timers: Timers;
  private active = false;
  private cancelRequested = false;
  private readonly pendingPermissions = new Map<string, (verdict: PermissionVerdict) => void>();
  private readonly injected: ProviderEvent[] = [];
  private abort = new AbortController();
  private menu: ModelMenu | undefined;

  constructor(
    turns: (ScriptedTurn | ScriptStep[])[],
    private readonly options: ScriptedProviderOptions = {},
  ) {
    this.turns = turns.map((t) => (Array.isArray(t) ? { steps: t } : t));
    this.timers = options.timers ?? realClock;
    this.supportsSteer = options.supportsSteer ?? false;
    this.cwd = options.cwd ?? process.cwd();
    this.menu = options.modelMenu;
    this.promptCapabilities = { ...options.promptCapabilities };
  }

  modelMenu(): ModelMenu | undefined {
    return this.menu;
  }

  async setModel(optionId: string): Promise<ModelMenu> {
    const menu = this.menu;
    if (!menu) throw new ParleyError("REFUSED", "the agent does not offer a model selector");
    this.modelChoices.push(optionId);
    const answer = this.options.setModel ?? ((id: string, m: ModelMenu) => ({ ...m, current: id }));
    this.menu = await answer(optionId, menu);
    return this.menu;
  }

  supportsCompaction(): boolean {
    return this.options.compaction !== undefined;
  }

  async compact(): Promise<CompactOutcome> {
    const script = this.options.compaction;
    if (!script) throw new ParleyError("REFUSED", "the agent does not offer compaction");
    if (this.active) throw new ParleyError("REFUSED", "a turn is already running on this agent session");
    this.compactions += 1;
    // A compaction is a turn of the agent's: it counts as one for hasActiveTurn() while it runs,
    // but nothing may be steered into it (nobody reads it), as with AcpProvider.
    this.active = true;
    this.compacting = true;
    try {
      if (script.delayMs !== undefined) await sleep(this.timers, script.delayMs);
      if (script.throws !== undefined) throw new ParleyError("PROVIDER_PROTOCOL", script.throws);
      const outcome = script.outcome ?? { ok: true };
      if (outcome.ok && outcome.contextUsagePct !== undefined) this.contextUsagePct = outcome.contextUsagePct;
      return { ...outcome };
    } finally {
      this.active = false;
      this.compacting = false;
    }
  }

  async start(): Promise<void> {
    if (this.options.startError !== undefined)
      throw new ParleyError("PROVIDER_SPAWN_FAILED", this.options.startError);
    this.started = true;
  }

  hasActiveTurn(): boolean {
    return this.active;
  }

  answerPermission(requestId: string, verdict: PermissionVerdict): void {
    this.answers.push({ requestId, verdict });
    const settle = this.pendingPermissions.get(requestId);
    this.pendingPermissions.delete(requestId);
    settle?.(verdict);
  }

  async cancel(): Promise<boolean> {
    if (!this.active || this.options.ignoreCancel) return false;
    this.cancelRequested = true;
    for (const [id, settle] of this.pendingPermissions) {
      this.pendingPermissions.delete(id);
      settle("cancelled");
    }
    this.abort.abort(new Error("cancelled"));
    return true;
  }

  async steer(text: string): Promise<boolean> {
    if (!this.supportsSteer || !this.active || this.compacting) return false;
    this.steers.push(text);
    const make = this.options.steerEvent ?? ((t, n) => ({ type: "steer_consumed", id: `s${n}`, summary: t }));
    const event = make(text, this.steers.length);
    if (event) this.injected.push(event);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.active = false;
    this.abort.abort(new Error("closed"));
  }

  prompt(content: string | PromptContent[]): AsyncIterable<ProviderEvent> {
    this.prompts.push(content);
    const files = new Map<string, Buffer | null>();
    for (const block of typeof content === "string" ? [] : content) {
      if (block.type !== "resource_link" || !block.uri.startsWith("file:")) continue;
      const path = fileURLToPath(block.uri);
      files.set(block.name, existsSync(path) ? readFileSync(path) : null);
    }
    this.linkedFiles.push(files);
    const turn = this.turns.shift() ?? { steps: [{ type: "complete", stopReason: "end_turn" }] };
    return this.play(turn);
  }

  private async *play(turn: ScriptedTurn): AsyncGenerator<ProviderEvent> {
    this.active = true;
    this.cancelRequested = false;
    this.abort = new AbortController();
    const queue: ScriptStep[] = [...turn.steps];
    try {
      while (queue.length > 0) {
        yield* this.drainInjected();
        if (this.cancelRequested) break;
        const step = queue.shift() as ScriptStep;
        if ("delayMs" in step) {
          try {
            await sleep(this.timers, step.delayMs, this.abort.signal);
          } catch {
            // Aborted by cancel/close: fall through to the cancelled ending below.
            break;
          }
          if (step.event) yield step.event;
          continue;
        }
        if ("throws" in step) throw new Error(step.throws);
        if ("raw" in step) {
          yield step.raw as ProviderEvent;
          continue;
        }
        if (step.type === "permission_request") {
          const answered = new Promise<PermissionVerdict>((resolve) =>
            this.pendingPermissions.set(step.requestId, resolve),
          );
          yield step;
          const verdict = await answered;
          queue.unshift(...(turn.onPermission?.[verdict] ?? []));
          continue;
        }
        // Usage as the agent reports it, like AcpProvider: the last figure is the session's.
        if (step.type === "usage" && step.size > 0) this.contextUsagePct = (step.used / step.size) * 100;
        yield step;
        if (step.type === "complete") return;
      }
      yield* this.drainInjected();
      if (this.cancelRequested || this.abort.signal.aborted)
        yield { type: "complete", stopReason: "cancelled" };
    } finally {
      this.active = false;
    }
  }

  private *drainInjected(): Generator<ProviderEvent> {
    while (this.injected.length > 0) yield this.injected.shift() as ProviderEvent;
  }
}
