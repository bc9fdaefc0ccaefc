/**
 * Discord's half of session resume: `!sessions` lists web chat sessions as buttons (s:<handle>:<i>)
 * and a press attaches this DM to the picked one. The routing machine, the conflict rules and the
 * durable record are the shared SessionBinder's; this file owns only who may list, where, and the
 * widget. Listing is host-wide (every web chat title on the install), so it is owner-only and DM-only.
 */
import type { AuditSink } from "../messaging/audit.js";
import type { ChannelLink } from "../messaging/link.js";
import type { ResumeReply, SessionBinder } from "../messaging/session-resume.js";
import { discordSafe, fitPlatformCap } from "./format.js";
import type { DiscordRest } from "./transport.js";
import { sessionRows } from "./widgets.js";

/** The Discord command spellings the shared notices name. */
export const DISCORD_RESUME_COPY = { sessions: "`!sessions`", new: "`!new`", unlink: "`!unlink`" } as const;

export const SESSIONS_OWNER_ONLY =
  "Only the bot's owner can list sessions: set exactly one id in discord.allowedUserIds to name one.";
export const SESSIONS_DM_ONLY =
  "The session list shows every web chat on this install, so it is only offered in a DM with the bot.";

export interface SessionPickerOptions {
  rest: Pick<DiscordRest, "createMessage" | "editMessage">;
  binder: SessionBinder;
  audit: AuditSink;
  /** The one configured user id, or undefined when the allow-list does not name exactly one person. */
  ownerId: string | undefined;
}

export class DiscordSessionPicker {
  constructor(private readonly o: SessionPickerOptions) {}

  get binder(): SessionBinder {
    return this.o.binder;
  }

  /**
   * `!sessions` from `who` at `location` (`isDm`: a direct chat). Posts the list and returns null, or
   * returns the refusal / "nothing to list" text for the caller's reply sink.
   */
  async list(location: ChannelLink, who: string, isDm: boolean): Promise<string | null> {
    // An allow-list names who may talk to the agent, not who owns the install: two entries is a guess.
    if (this.o.ownerId === undefined || who !== this.o.ownerId) {
      this.o.audit.log("session_resume.list", "refused", {
        channel: "discord",
        who,
        reason: "no_unambiguous_owner",
      });
      return SESSIONS_OWNER_ONLY;
    }
    // A thread is readable by everyone who can see its channel, not only the allow-listed.
    if (!isDm) {
      this.o.audit.log("session_resume.list", "refused", {
        channel: "discord",
        who,
        reason: "shared_audience",
      });
      return SESSIONS_DM_ONLY;
    }
    const offer = this.o.binder.offer(location, who);
    if (offer.choices.length === 0) return offer.text;
    const [content] = fitPlatformCap(discordSafe("Pick a web chat session to continue in this DM:"));
    const res = await this.o.rest.createMessage(location.conversationId, {
      content: content ?? "",
      components: sessionRows(
        offer.handle,
        offer.choices.map((c) => c.title),
      ),
    });
    return res.ok ? null : "Could not post the session list; try again.";
  }

  /**
   * A press on s:<handle>:<index> of message `messageId`. On success the list message becomes the
   * outcome (its buttons used up) and null is returned; otherwise the text to show the presser alone.
   */
  async press(
    location: ChannelLink,
    messageId: string,
    handle: string,
    index: number,
    presser: string,
  ): Promise<string | null> {
    const reply: ResumeReply = await this.o.binder.choose(handle, index, location, presser);
    if (!reply.ok) return reply.text;
    const [content] = fitPlatformCap(discordSafe(reply.text));
    const res = await this.o.rest.editMessage(location.conversationId, messageId, {
      content: content ?? "",
      components: [],
    });
    return res.ok ? null : reply.text;
  }
}
