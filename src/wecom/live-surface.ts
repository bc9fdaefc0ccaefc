/**
 * WeCom as a LiveSurface. The kit's live message is a chain of bubbles (bubbles.ts): a post opens
 * one, an edit re-sends it whole under the same stream id, a seal finishes it; each frame carries
 * the reasoning in WeCom's `<think></think>` (think-block.ts) and keeps within 5,120 code points and
 * 20,480 bytes (frame.ts). A seal's head is sealed in the bubble, the rest pushed (seal.ts). All
 * that is not the bubble is a push first (outbox.ts): notices, receipts, the prompt and its decision
 * (prompts.ts). A sealed bubble or a push is never written again.
 */
import type { LiveSurface } from "../messaging/channel/live-surface.js";
import type { AuditSink } from "../messaging/security/audit.js";
import { displaySafeFor } from "../messaging/text/options.js";
import { splitMarkdownSafe } from "../messaging/text/split.js";
import { BubbleStream, type BubbleStreamOptions, FrameNotTaken } from "./bubbles.js";
import { composeFrame, fitsFrame } from "./frame.js";
import { WECOM_ANSWER_CHARS } from "./limits.js";
import type { Outbox, WeComAddress } from "./outbox.js";
import { WeComPrompts } from "./prompts.js";
import { joinLine, WeComSeal } from "./seal.js";
import { WECOM_CAPABILITIES } from "./transport.js";

/** No widget is rendered: a prompt is answered by a typed reply, choices are a numbered list. */
export type WeComWidgets = null;

const PAUSED = "⏸️ Waiting for your permission (below)…";

/** The stream's needs (the wire, the clock, the reasoning, the transform) and the rest of the route. */
export interface WeComSurfaceOptions extends Omit<BubbleStreamOptions, "reqId"> {
  outbox: Outbox;
  address: WeComAddress;
  audit?: AuditSink | undefined;
}

/** A message this turn does not write (again): a sealed bubble, a push, a prompt taken below. */
class Unwritten extends Error {}

export function wecomLiveSurface(o: WeComSurfaceOptions): LiveSurface<WeComWidgets> & { stop(): void } {
  const { outbox, present } = o;
  const safe = (text: string) => displaySafeFor(text, WECOM_CAPABILITIES);
  const stream = new BubbleStream({ ...o, reqId: o.address.reqId });
  const prompts = new WeComPrompts(outbox, present);
  let n = 0;
  /** The kit's live message (the open chain of bubbles). */
  let liveId: string | null = null;
  /** The live frame the kit just fitted: its raw source, on which progress is counted. */
  let fitted: { source: string; footer: string; shown: string } | null = null;
  let seal = new WeComSeal({ ...o, stream }, [], "");
  const landed = (ok: boolean, kind: string) => (ok ? `${kind}-${++n}` : null);

  const frame = async (shown: string): Promise<void> => {
    const f = fitted?.shown === shown ? fitted : null;
    fitted = null;
    const verdict = await stream.frame(f?.source ?? "", f ? f.footer : shown);
    if (verdict && verdict.kind !== "accepted") throw new FrameNotTaken(verdict);
  };

  return {
    capabilities: WECOM_CAPABILITIES,
    // 0: the splitter never cuts; a bubble shows its head live, a seal splits the rest (seal.ts).
    sourceCap: 0,
    commands: { new: "/new", stop: "/stop" },
    plain: safe,
    quiet: (text) => `_${safe(text)}_`,
    promptHead: (title, purpose) => prompts.head(title, purpose),
    promptBody: (head, hint) => prompts.body(head, hint),
    decided: (_head, outcome, title) => prompts.decided(title, outcome),
    fit: (source, footer = "", live = false) => {
      if (live) {
        const text = stream.preview(source);
        fitted = { source, footer, shown: joinLine(text, footer) };
        return text ? [text] : [];
      }
      const segment = stream.segment(source);
      const pieces = segment.trim() ? splitMarkdownSafe(segment, WECOM_ANSWER_CHARS).map(present) : [];
      seal = new WeComSeal({ ...o, stream }, pieces, footer);
      return seal.pieces;
    },
    join: joinLine,
    fits: fitsFrame,
    post: async ({ body, live, quiet }) => {
      if (live) {
        stream.begin();
        liveId = `live-${++n}`;
        // The bubble is open whatever WeCom said of its first frame: the next one tries again.
        await frame(body).catch((error: unknown) =>
          o.logger.debug("wecom: a live frame was not taken", { error: String(error) }),
        );
        return liveId;
      }
      if (prompts.is(body)) return prompts.show(body);
      if (quiet) return landed(await outbox.say(body), "notice");
      return landed(await seal.deliver(body), "answer");
    },
    edit: async (id, { body, live, quiet }) => {
      const decided = await prompts.decide(id, body);
      if (decided === false) throw new Unwritten("wecom: the decision line did not arrive");
      if (decided) return;
      if (id !== liveId) throw new Unwritten("wecom: a sealed bubble or a push is not written again");
      if (live) return frame(body);
      liveId = null;
      if (prompts.is(body)) {
        // The prompt is pushed below the bubble, which says what it waits for.
        await stream.pause(present(PAUSED));
        throw new Unwritten("wecom: the prompt goes below the bubble");
      }
      if (quiet && !(await stream.become(composeFrame({ body }))))
        throw new Unwritten("wecom: the notice goes by push");
      if (!quiet && !(await seal.deliver(body)))
        throw new Unwritten("wecom: the answer's head reached nobody");
    },
    // Each frame's fate is WeCom's verdict, handled here: the kit never posts an edit anew.
    refused: () => false,
    options: () => null,
    approval: (_requestId, _nonce, options) => ({ widgets: undefined, shown: prompts.offered(options) }),
    noWidgets: null,
    expiring: () => stream.expiring,
    stop: () => stream.stop(),
  };
}
