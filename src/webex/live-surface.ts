/**
 * Webex as a LiveSurface: Markdown redacted on the form Webex renders, held to 7,439 UTF-8 bytes. An
 * answer is sealed whole (the splitter never cuts) and split by the byte-bounded fence-safe splitter
 * (a raw table byte-exact); a live frame is a bounded tail of it under the status line, spent from
 * the edit budget. Cards go beside the text (a card cannot be edited): Approve/Deny beside an
 * editable prompt, one submit per choice. Refusals map to the kit's: a new message only when Webex
 * refused for another reason than its organization's policy, whose refused words are never offered
 * again (the reader is told once, with the tracking id). Images go one per message after the text.
 */
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import type { WebexWidgets } from "./cards.js";
import { APPROVAL_CHOICES, approvalCard } from "./cards.js";
import { fitsOneChunk, fitWebex, lastByteGuard, webexSafe, withLine } from "./format.js";
import type { WebexMessagesOptions } from "./messages.js";
import { WebexMessages } from "./messages.js";
import { WebexRefusal } from "./refusals.js";
import { WEBEX_CAPABILITIES } from "./transport.js";
import type { WebexUpload } from "./uploads.js";
import { extractUploads, sendUploads } from "./uploads.js";

export interface WebexSurfaceOptions extends WebexMessagesOptions {
  /** Absent (or no `upload`, no `audit`): no uploads; image paths stay visible as text. */
  uploads?: OutboundFilePolicy | undefined;
  upload?: WebexUpload | undefined;
}

const NONE: WebexWidgets = { kind: "none" };

export function webexLiveSurface(
  o: WebexSurfaceOptions,
): LiveSurface<WebexWidgets> & { framesLeft(): boolean } {
  const messages = new WebexMessages(o);
  const { uploads, upload, audit } = o;
  const post = async ({ body, widgets, quiet, live }: LiveMessage<WebexWidgets>): Promise<string | null> => {
    const id = body ? await messages.create(body) : null;
    const card = await messages.beside(id, widgets);
    if (widgets?.kind === "approval") {
      // Shown when its text or its card landed: typed 1/2 answers either.
      if (id !== null || card !== null) return id ?? card;
      // Denied by the driver; Webex's own is the record of it and the tracking id for the reader.
      o.audit?.log("webex.approval", "denied", { request: widgets.requestId, reason: "prompt_not_shown" });
      await messages.tell("prompt");
    } else if (id === null && !quiet && !live) await messages.tell("answer");
    return id;
  };
  return {
    capabilities: WEBEX_CAPABILITIES,
    // 0: the splitter never cuts; a seal's whole answer is split by bytes in `fit`.
    sourceCap: 0,
    commands: { new: "`/new`", stop: "/stop" },
    plain: webexSafe,
    quiet: (text) => `_${webexSafe(text)}_`,
    promptHead: (title, purpose) =>
      webexSafe(`🔐 **Permission needed:** ${title}${purpose ? `\n\n${purpose}` : ""}`),
    promptBody: (head, hint) => webexSafe(`${head}\n\n${hint}`),
    decided: (head, outcome) => withLine(head, `**${webexSafe(outcome)}**`),
    fit: (source, footer, live) =>
      fitWebex(source, { policy: WEBEX_CAPABILITIES.tableMode, footer: footer ?? "", live: live ?? false }),
    // A line that does not fit is dropped, never truncated mid-way.
    join: (body, footer) => withLine(body, footer),
    fits: (body) => lastByteGuard(body).length === 1,
    tableFits: fitsOneChunk,
    post,
    edit: async (id, { body, widgets, live, quiet }) => {
      try {
        await messages.edit(id, body, live ?? false);
      } catch (error) {
        // Part of the answer the policy refused is not sent again: the reader is told. (A prompt
        // is posted anew, and the post tells.)
        if (!live && !quiet && widgets?.kind !== "approval" && error instanceof WebexRefusal && error.policy)
          await messages.tell("answer");
        throw error;
      }
      await messages.beside(id, widgets);
    },
    refused: (error) => error instanceof WebexRefusal && error.postAnew,
    options: (choices) => ({ kind: "options", choices }),
    approval: (requestId, nonce, _options, title) => ({
      widgets: { kind: "approval", requestId, card: approvalCard(title, requestId, nonce) },
      shown: APPROVAL_CHOICES.map((verdict) => ({ verdict })),
    }),
    noWidgets: NONE,
    files:
      uploads && upload && audit
        ? {
            hide: hideLocalRefs,
            extract: async (source) => {
              const x = await extractUploads(source, uploads, audit);
              // A refused image's reason goes under the answer, where its markup stays.
              return { text: [x.text, ...x.notes].filter((t) => t.trim()).join("\n\n"), files: x.files };
            },
            send: (found) =>
              sendUploads(found as readonly OutboundFile[], {
                roomId: o.roomId,
                upload,
                say: (markdown) => messages.create(markdown),
                lost: o.lost,
              }),
          }
        : undefined,
    framesLeft: () => messages.budget.framesLeft(),
  };
}
