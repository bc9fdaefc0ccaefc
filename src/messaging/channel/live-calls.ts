/**
 * The LiveRenderer's platform calls, each with its failure rule in one place: a post that did not
 * land marks the turn's delivery failed; a final edit the platform refused is posted anew (a
 * network failure may have landed, so it is not repeated: the answer would show twice); a frame or
 * decoration that failed is only logged (the seal rewrites it). Layer: messaging.
 */
import type { Logger } from "../base/logger.js";
import type { ReasoningPreview } from "./live-status.js";
import type { LiveMessage, LiveSurface } from "./live-surface.js";

export class LiveCalls<W> {
  constructor(
    private readonly surface: LiveSurface<W>,
    private readonly channel: string,
    private readonly logger: Logger,
    /** A message the user should have seen did not land. */
    readonly failed: () => void,
  ) {}

  /** The reasoning preview (when there is one), posted ahead of a message; its loss is only logged. */
  async reasoning(preview: string | null): Promise<void> {
    if (preview === null || !this.surface.thinking) return;
    try {
      if ((await this.surface.post({ body: this.surface.thinking(preview), quiet: true })) === null)
        this.logger.debug(`${this.channel}: the reasoning message did not land`);
    } catch (error) {
      this.logger.debug(`${this.channel}: the reasoning message failed`, { error: String(error) });
    }
  }

  /** Post one message; null (and a failed delivery) when it did not land. */
  async post(message: LiveMessage<W>): Promise<string | null> {
    try {
      const id = await this.surface.post(message);
      if (id === null) this.failed();
      return id;
    } catch (error) {
      this.failed();
      this.logger.error(`${this.channel}: send failed`, { error: String(error) });
      return null;
    }
  }

  /**
   * A live message that shows only its footer, rewritten as the reasoning preview when one is still
   * to be shown (it was opened before the agent reasoned): whether it now is the reasoning.
   */
  async reasoningOver(
    live: { id: string; body: boolean } | null,
    reasoning: ReasoningPreview,
  ): Promise<boolean> {
    if (!live || live.body || !this.surface.thinking) return false;
    const preview = reasoning.take();
    if (preview === null) return false;
    return this.tryEdit(
      live.id,
      { body: this.surface.thinking(preview), quiet: true },
      "could not show the reasoning",
    );
  }

  /** Finalize a message by editing it; if the platform refused the edit, post it anew. */
  async editOrPost(id: string, message: LiveMessage<W>): Promise<string | null> {
    try {
      await this.surface.edit(id, message);
      return id;
    } catch (error) {
      if (!this.surface.refused(error)) {
        this.failed();
        this.logger.error(`${this.channel}: final edit failed`, { error: String(error) });
        return null;
      }
      this.logger.warn(`${this.channel}: final edit refused; sending as a new message`, {
        error: String(error),
      });
      return this.post(message);
    }
  }

  /**
   * A live frame's edit. A lost frame is harmless (the seal rewrites the message), so a failure is
   * only logged; "refused" when the platform refused it and the frame may continue in a new message.
   */
  async editLive(
    id: string,
    message: LiveMessage<W>,
    postOnRefusal?: boolean,
  ): Promise<"edited" | "lost" | "refused"> {
    try {
      await this.surface.edit(id, message);
      return "edited";
    } catch (error) {
      this.logger.debug(`${this.channel}: live edit failed`, { error: String(error) });
      return postOnRefusal && this.surface.refused(error) ? "refused" : "lost";
    }
  }

  /** An edit whose loss is harmless (a later one rewrites it): whether it landed, the failure logged. */
  async tryEdit(id: string, message: LiveMessage<W>, what: string): Promise<boolean> {
    try {
      await this.surface.edit(id, message);
      return true;
    } catch (error) {
      this.logger.debug(`${this.channel}: ${what}`, { error: String(error) });
      return false;
    }
  }
}

/**
 * [OPTIONS:] in a message of their own, for a surface that keeps them apart from the text; when
 * that message did not land they are listed as text, since their trailer is already cut from the answer.
 */
export async function postOptionsApart<W>(
  surface: LiveSurface<W>,
  choices: readonly string[],
  post: (message: LiveMessage<W>) => Promise<string | null>,
): Promise<void> {
  if (!surface.optionsApart || !choices.length) return;
  if ((await post({ body: "", widgets: surface.options(choices) })) !== null) return;
  await post({ body: surface.plain(choices.map((choice, i) => `${i + 1}. ${choice}`).join("\n")) });
}
