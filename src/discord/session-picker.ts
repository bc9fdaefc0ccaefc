/**
 * Discord's half of session resume: `!sessions` lists web chat sessions as buttons (s:<handle>:<i>)
 * and a press attaches this conversation to the picked one. The routing machine, the conflict rules
 * and the durable record are the shared SessionBinder's; this file owns only who may list, where,
 * and the widget. Listing is host-wide (every web chat title on the install), so it is owner-only,
 * and it is shown only where nobody else can read it: a DM, or in a thread the EPHEMERAL reply to
 * the owner's `/sessions` (a thread is readable by everyone who can see its channel).
 */
import type { AuditSink } from "../messaging/security/audit.js";
import type { ChannelLink } from "../messaging/session/keys.js";
import type { ResumeReply, SessionBinder } from "../messaging/session/resume.js";
import { discordSafe, fitPlatformCap } from "./format.js";
import type { ActionRow, MessageBody } from "./payload.js";
import type { DiscordRest } from "./transport.js";
import { sessionRows } from "./widgets.js";

/** The Discord command spellings the shared notices name. */
export const DISCORD_RESUME_COPY = { sessions: "`!sessions`", new: "`!new`", unlink: "`!unlink`" } as const;

export const SESSIONS_OWNER_ONLY =
  "Only the bot's owner can list sessions: name one with discord.owner (or allow-list exactly one id).";
export const SESSIONS_THREAD_USE_SLASH =
  "The session list shows every web chat on this install, so it is not posted where others can read it: " +
  "in a thread, use the `/sessions` command: its list is shown only to you.";
/**
 * Posted PUBLICLY in a thread once a pick attached it: members see the agent answer from another
 * transcript (and their messages land in it), so they are told; the title stays private.
 */
export const THREAD_RESUMED_NOTICE =
  "🔗 This thread now continues a web chat session of the bot's owner. `!unlink` detaches it.";

/** Where a list was asked for: a DM, a thread by text, or a thread by slash command (a private reply). */
export type ListSurface =
  | { kind: "dm" }
  | { kind: "thread" }
  | { kind: "thread-private"; reply: (content: string, components: ActionRow[]) => Promise<boolean> };

export interface SessionPickerOptions {
  rest: Pick<DiscordRest, "createMessage">;
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
   * `!sessions` from `who` at `location`. In a DM the list is posted there; in a thread only through
   * `surface.reply` (the ephemeral answer to `/sessions`). Returns null once the list is shown, or the
   * refusal / "nothing to list" text for the caller's reply sink.
   */
  async list(location: ChannelLink, who: string, surface: ListSurface): Promise<string | null> {
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
    if (surface.kind === "thread") {
      this.o.audit.log("session_resume.list", "refused", {
        channel: "discord",
        who,
        reason: "shared_audience",
      });
      return SESSIONS_THREAD_USE_SLASH;
    }
    const offer = this.o.binder.offer(location, who);
    if (offer.choices.length === 0) return offer.text;
    const here = surface.kind === "dm" ? "this DM" : "this thread";
    const [content] = fitPlatformCap(discordSafe(`Pick a web chat session to continue in ${here}:`));
    const components = sessionRows(
      offer.handle,
      offer.choices.map((c) => c.title),
    );
    const shown =
      surface.kind === "dm"
        ? (await this.o.rest.createMessage(location.conversationId, { content: content ?? "", components }))
            .ok
        : await surface.reply(content ?? "", components);
    return shown ? null : "Could not post the session list; try again.";
  }

  /**
   * A press on s:<handle>:<index>. On success the list message becomes the outcome (its buttons used
   * up, through `edit`: the channel route for a DM list, the press's @original for an ephemeral one)
   * and null is returned; otherwise the text to show the presser alone. In a thread a success is also
   * announced publicly, without the title.
   */
  async press(
    location: ChannelLink,
    edit: (body: MessageBody) => Promise<boolean>,
    handle: string,
    index: number,
    presser: string,
  ): Promise<string | null> {
    const reply: ResumeReply = await this.o.binder.choose(handle, index, location, presser);
    if (!reply.ok) return reply.text;
    const [content] = fitPlatformCap(discordSafe(reply.text));
    const edited = await edit({ content: content ?? "", components: [] });
    // Best effort: a notice that did not land is logged by the client; the binding stands either way.
    if (location.threadId)
      await this.o.rest.createMessage(location.conversationId, { content: THREAD_RESUMED_NOTICE });
    return edited ? null : reply.text;
  }
}
