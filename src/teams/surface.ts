/**
 * Teams' surface for the hub: its address is one personal conversation (where it is reached and
 * who it is with, as the gate resolved them), one generation bucket per person, every post through
 * that conversation's outbox (teamsSafe on every text, Teams' caps on every message).
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { ChannelSurface, Conversation, PickerSurface, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import type { TeamsFileOptions } from "./attachments.js";
import { teamsAttachment } from "./attachments.js";
import type { ChoiceBook } from "./cards.js";
import { choicesCard, settledCard } from "./cards.js";
import { fitTeams, teamsSafe } from "./format.js";
import type { TeamsSender } from "./outbox.js";
import { attachmentsActivity, TeamsOutbox, textActivity } from "./outbox.js";
import { TeamsRenderer } from "./renderer.js";
import type { TeamsAddress, TeamsRoutes } from "./routes.js";

export interface TeamsSurfaceOptions {
  sender: TeamsSender;
  routes: TeamsRoutes;
  choices: ChoiceBook;
  files: TeamsFileOptions;
  agentName: string;
  /** The channel's owner (teams.owner, else the sole allow-listed identity). */
  isOwner(identity: string): boolean;
  throttleMs?: number;
  typingEveryMs?: number;
}

/** What a model list says it is when Teams shows it as a card (a code point budget, see PickerSurface). */
const PICKER_MAX_CHARS = 3000;

export class TeamsSurface implements ChannelSurface<TeamsAddress> {
  constructor(
    private readonly o: TeamsSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "sessions">,
  ) {}

  outbox(a: TeamsAddress): TeamsOutbox {
    return new TeamsOutbox({
      sender: this.o.sender,
      address: a,
      routes: this.o.routes,
      audit: this.ctx.audit,
      logger: this.ctx.logger,
    });
  }

  conversation(a: TeamsAddress): Conversation {
    return {
      // A personal chat is keyed by the person: the identity the allow-list authorized.
      route: `dm:${a.identity}`,
      direct: true,
      link: { channelType: "teams", conversationId: a.conversationId },
    };
  }

  sessionKey(a: TeamsAddress, generation: number): string {
    return buildDmSessionKey("teams", this.o.agentName, a.identity, { gen: generation });
  }

  /** True only when every part landed; never throws (a failure is logged, and typed underneath). */
  async reply(a: TeamsAddress, text: string, parts?: TurnParts): Promise<boolean> {
    const outbox = this.outbox(a);
    try {
      for (const piece of fitTeams(teamsSafe(text))) {
        const activity = textActivity(piece);
        const id = parts
          ? await parts.post(JSON.stringify(activity), {
              create: () => outbox.send(activity),
              replace: async (earlier) => {
                await outbox.update(earlier, activity);
                return true;
              },
            })
          : await outbox.send(activity);
        if (!id) return false;
      }
      return true;
    } catch (error) {
      this.ctx.logger.warn("teams: a reply did not land", { error: String(error) });
      return false;
    }
  }

  /** A whole message nobody asked for (a proactive send): its first id; a failure is thrown, typed. */
  async postTo(a: TeamsAddress, text: string): Promise<string> {
    const outbox = this.outbox(a);
    let first = "";
    for (const piece of fitTeams(teamsSafe(text))) {
      const id = await outbox.send(textActivity(piece));
      first ||= id;
    }
    return first;
  }

  receipts(a: TeamsAddress): ReceiptSurface {
    const outbox = this.outbox(a);
    return {
      post: async (text) => {
        try {
          return await outbox.send(textActivity(teamsSafe(text)));
        } catch (error) {
          this.ctx.logger.warn("teams: a receipt did not land", { error: String(error) });
          return "";
        }
      },
      edit: async (id, text) => {
        try {
          await outbox.update(id, textActivity(teamsSafe(text)));
        } catch (error) {
          // Cosmetic: the receipt is edited again as the queue moves.
          this.ctx.logger.debug("teams: a receipt edit failed", { error: String(error) });
        }
      },
    };
  }

  newRenderer(a: TeamsAddress, turn: TurnStart<undefined>): TeamsRenderer {
    return new TeamsRenderer({
      outbox: this.outbox(a),
      owner: this.o.isOwner(a.identity),
      choices: this.o.choices,
      audit: this.ctx.audit,
      logger: this.ctx.logger,
      clock: this.ctx.clock,
      uploads: turn.files,
      parts: turn.parts,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
      ...(this.o.typingEveryMs !== undefined ? { typingEveryMs: this.o.typingEveryMs } : {}),
      contextUsage: async () => (await this.ctx.sessions.existingProvider(turn.sessionKey))?.contextUsagePct,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((ref) => teamsAttachment(ref, this.o.files));
  }

  /** Model lists as a card of buttons; settled into the choice (its buttons gone) once used. */
  pickers(a: TeamsAddress): PickerSurface {
    const outbox = this.outbox(a);
    return {
      maxChars: PICKER_MAX_CHARS,
      post: async (text, labels) => {
        try {
          return await outbox.send(attachmentsActivity([choicesCard(text, labels, "model")]));
        } catch (error) {
          this.ctx.logger.warn("teams: posting a picker failed", { error: String(error) });
          return null;
        }
      },
      settle: async (handle, text) => {
        try {
          await outbox.update(handle, attachmentsActivity([settledCard(text)]));
        } catch {
          await this.reply(a, text);
        }
      },
    };
  }
}
