/**
 * Teams' half of session resume: `/sessions` lists the web chat sessions on this install as a card,
 * and a press attaches this personal chat to the picked one. The routing machine, the conflict rules
 * and the durable record are the shared SessionBinder's; this file owns who may list and the widget.
 * The rule is STRICTER than Discord's: a Teams allow-list routinely holds several colleagues, and a
 * web chat session is the operator's whole working transcript, so listing is refused unless the
 * allow-list holds exactly one identity (never "the first entry"). A press carries an index and the
 * offer's handle, resolved against the list this process offered: a forged press can only miss.
 */
import { z } from "zod";
import type { ChannelList } from "../messaging/channel/hub.js";
import { PICK_REFUSAL_TEXT } from "../messaging/channel/picker.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { SessionBinder } from "../messaging/session/resume.js";
import { sessionsCard, settledCard } from "./cards.js";
import type { TeamsOutbox } from "./outbox.js";
import { attachmentsActivity } from "./outbox.js";
import type { TeamsAddress } from "./routes.js";

/** The Teams command spellings the shared resume notices name. */
export const TEAMS_RESUME_COPY = { sessions: "`/sessions`", new: "`/new`", unlink: "`/unlink`" } as const;

export const SESSIONS_ONE_PERSON_ONLY =
  "Session lists show every web chat on this install, so they are shown only when teams.allowedUsers names exactly one person.";

export interface TeamsSessionPickerOptions {
  binder: SessionBinder;
  audit: AuditSink;
  outbox(address: TeamsAddress): TeamsOutbox;
  /** The one allow-listed identity, or undefined when the list names several. */
  soleIdentity: string | undefined;
}

export class TeamsSessionPicker {
  constructor(private readonly o: TeamsSessionPickerOptions) {}

  get binder(): SessionBinder {
    return this.o.binder;
  }

  private link(a: TeamsAddress) {
    return { channelType: "teams", conversationId: a.conversationId };
  }

  /** `/sessions`: null once the card is shown, or the text to answer with (a refusal, "nothing"). */
  async list(a: TeamsAddress, who: string): Promise<string | null> {
    if (this.o.soleIdentity === undefined || who !== this.o.soleIdentity) {
      this.o.audit.log("session_resume.list", "refused", {
        channel: "teams",
        who,
        reason: "not_sole_identity",
      });
      return SESSIONS_ONE_PERSON_ONLY;
    }
    const offer = this.o.binder.offer(this.link(a), who);
    if (offer.choices.length === 0) return offer.text;
    const card = sessionsCard(
      "Pick a web chat session to continue in this chat:",
      offer.handle,
      offer.choices.map((c) => c.title),
    );
    try {
      await this.o.outbox(a).send(attachmentsActivity([card]));
      return null;
    } catch {
      return "Could not post the session list; try again.";
    }
  }

  /** A press: null once the card shows the outcome, else the text to tell the presser. */
  async press(
    a: TeamsAddress,
    cardId: string | undefined,
    handle: string,
    index: number,
    presser: string,
  ): Promise<string | null> {
    const reply = await this.o.binder.choose(handle, index, this.link(a), presser);
    if (!reply.ok) return reply.text;
    if (!cardId) return reply.text;
    try {
      await this.o.outbox(a).update(cardId, attachmentsActivity([settledCard(reply.text)]));
      return null;
    } catch {
      return reply.text;
    }
  }

  /**
   * The list as the hub keeps it pressable (`hub.pressList(address, TEAMS_SESSION_LIST, …)`): with
   * several gateways, a press judged by the gateway that offered the list.
   */
  get pressable(): ChannelList<TeamsAddress> {
    return {
      holds: (data) => {
        const press = sessionPress.safeParse(data);
        return press.success && this.o.binder.offers(press.data.h);
      },
      judge: async (address, data) => {
        const press = sessionPress.safeParse(data);
        if (!press.success) return PICK_REFUSAL_TEXT.unknown;
        const { cardId, h, i, presser } = press.data;
        return this.press(address, cardId ?? undefined, h, i, presser);
      },
    };
  }
}

/** The hub's name for the session list. */
export const TEAMS_SESSION_LIST = "sessions";

/** A session-list press as it travels (another gateway may have written it: validated). */
const sessionPress = z.object({
  cardId: z.string().max(512).nullable(),
  h: z.string().max(512),
  i: z.number().int().nonnegative(),
  presser: z.string().max(512),
});

export type SessionPress = z.infer<typeof sessionPress>;
