/**
 * WhatsApp as a LiveSurface: a segment converted whole into the dialect (a later line can change
 * an earlier one: a closing fence, an emphasis pair) and split at 4,096 code points, the last
 * bubble keeping room for the status line; italics for the quiet line; no widgets (choices are a
 * numbered list, a prompt is answered by typing); "typing" on and off; images after the text. The
 * bubbles and their edit window are bubbles.ts; the kit's ids are our own bubbles' message ids.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { LiveMessage, LiveSurface } from "../messaging/channel/live-surface.js";
import type { OutboundFilePolicy } from "../messaging/channel/surface.js";
import type { OutboundFile } from "../messaging/files/outbound-files.js";
import { hideLocalRefs } from "../messaging/files/outbound-files.js";
import type { BubblesOptions } from "./bubbles.js";
import { Bubbles } from "./bubbles.js";
import { displaySafeText, renderChunks, WHATSAPP_MAX_CHARS } from "./format.js";
import type { WhatsAppTransport } from "./transport.js";
import { extractUploads, sendImages } from "./uploads.js";

export interface WhatsAppSurfaceOptions extends BubblesOptions {
  logger: Logger;
  /** "typing" re-sent this often; absent: the turn shows none (an unprompted one). */
  typingIntervalMs?: number | undefined;
  /** Local images to send after the text; absent = their paths stay text. */
  uploads?: OutboundFilePolicy | undefined;
}

/** Room kept in the last bubble for the status line. */
const STATUS_RESERVE = 120;

const codePoints = (text: string) => Array.from(text).length;

export function whatsappLiveSurface(t: WhatsAppTransport, o: WhatsAppSurfaceOptions): LiveSurface<null> {
  const bubbles = new Bubbles(t, o);
  const post = ({ body }: LiveMessage<null>) => bubbles.post(body);
  const typing = o.typingIntervalMs;
  const uploads = o.uploads;
  return {
    capabilities: t.capabilities,
    // 0: the splitter never cuts; `fit` splits the whole segment once it is converted.
    sourceCap: 0,
    // Inline code in a notice: WhatsApp must not reformat the command.
    commands: { new: "`/new`", stop: "/stop" },
    plain: displaySafeText,
    quiet: (text) => `_${displaySafeText(text)}_`,
    promptHead: (title, purpose) =>
      `🔐 *Permission needed:* ${displaySafeText(title)}${purpose ? `\n${displaySafeText(purpose)}` : ""}`,
    promptBody: (head, hint) => `${head}\n\n_${hint}_`,
    decided: (head, outcome) => `${head}\n\n*${outcome}*`,
    // A status line longer than the usual reserve still fits under the last bubble.
    fit: (source, footer, live) =>
      renderChunks(source, {
        live: live ?? false,
        reserve: footer ? Math.max(STATUS_RESERVE, codePoints(footer) + 2) : 0,
      }),
    join: (body, footer) => (body && footer ? `${body}\n\n${footer}` : body || footer),
    fits: (body) => codePoints(body) <= WHATSAPP_MAX_CHARS,
    post,
    edit: (id, { body }) => bubbles.edit(id, body),
    // Recipients ignore a late edit and baileys never says so: any failed edit may not have landed,
    // and a repeated sentence in a new bubble is recoverable where a missing one is not.
    refused: () => true,
    options: () => null,
    // Without buttons the prompt offers the two answers that need no explaining; a typed 3
    // ("always") still works, the help card says so.
    approval: (_requestId, _nonce, options) => ({
      widgets: undefined,
      shown: options.filter((opt) => opt.verdict !== "approve_always"),
    }),
    noWidgets: null,
    typing:
      typing === undefined
        ? undefined
        : { everyMs: typing, send: () => t.typing(o.chat, true), stop: () => t.typing(o.chat, false) },
    files: uploads
      ? {
          hide: hideLocalRefs,
          extract: (source) => extractUploads(source, uploads, o.logger),
          send: (found) => sendImages(t, o, found as readonly OutboundFile[], (body) => post({ body })),
        }
      : undefined,
  };
}
