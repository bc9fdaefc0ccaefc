/**
 * The one rule for an approval prompt a renderer could not show: it is denied at once (nobody can
 * answer a prompt nobody saw, and waiting out the approval window would only stall the agent), the
 * audit row says why, and the person is told in the chat when anything can still be posted there.
 * The TurnDriver applies it to a turn's prompts, the channel-server bridge to an agent host's, so
 * every channel gets the same behaviour and none carries its own.
 */
import { ParleyError } from "../base/errors.js";
import type { Logger } from "../base/logger.js";
import type { PromptEvent, Renderer } from "./renderer.js";

/** The audit reason of a prompt denied because it was never shown. */
export const PROMPT_NOT_SHOWN = "prompt_not_shown";

/** An approval prompt that did not reach the person: its asker answers deny. */
export class PromptNotShownError extends ParleyError {
  constructor(readonly requestId: string) {
    super("PROMPT_NOT_SHOWN", `approval prompt ${requestId} could not be shown`);
    this.name = "PromptNotShownError";
  }
}

/**
 * Ask the renderer to show a prompt: true only when it says the person can answer it. A throw is
 * "not shown" (and a delivery failure): a failure must never leave a prompt waiting as if asked.
 */
export async function presentPrompt(
  renderer: Renderer,
  event: PromptEvent,
  log: Logger,
  session: string,
): Promise<boolean> {
  try {
    return await renderer.showPrompt(event);
  } catch (error) {
    renderer.deliveryFailed = true;
    log.error("renderer failed to show an approval prompt", {
      session,
      request: event.requestId,
      error: String(error),
    });
    return false;
  }
}

/**
 * Tell the person a prompt was denied because it could not be shown, through the channel's own
 * out-of-band line. Best effort: the deny stands whatever the post does, so a failure is logged.
 */
export async function tellPromptNotShown(
  renderer: Renderer,
  notify: ((text: string) => Promise<unknown>) | undefined,
  log: Logger,
  session: string,
): Promise<void> {
  if (!notify) return;
  try {
    await notify(renderer.promptNotShownNotice);
  } catch (error) {
    log.warn("the notice for an unshown approval prompt did not land", { session, error: String(error) });
  }
}
