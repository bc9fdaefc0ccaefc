/**
 * What each COMMAND_SPEC entry does on Telegram. The decisions are the shared handlers' (they return
 * TEXT); this file supplies the address (the route, the session key) and sends the reply.
 */

import { stopRunningTurn } from "../messaging/queue/stop.js";
import { compactSession } from "../messaging/session/agent-controls.js";
import { recordManualTitle } from "../messaging/session/auto-title.js";
import { rebindConversationLocation, releaseConversationLocation } from "../messaging/session/keys.js";
import type { PrivacyMode } from "../messaging/session/privacy-mode.js";
import { MODE_INCOGNITO, MODE_TEMPORARY } from "../messaging/session/privacy-mode.js";
import type { CommandSpec } from "./commands.js";
import { helpText, usageOf } from "./commands.js";
import type { TelegramDispatcher } from "./dispatch.js";
import type { Route } from "./routes.js";
import { locationOf } from "./routes.js";

export interface CommandContext {
  route: Route;
  key: string;
  userId: string;
  spec: CommandSpec;
  arg: string;
}

const MAX_LISTED = 20;

/** A routed message and the end of whatever turn it started (resolved when it started none). */
export interface Handled {
  turn: Promise<unknown>;
}
export const NOTHING: Handled = { turn: Promise.resolve() };

/**
 * Runs a command; resolves once it is routed, with a promise for any work it left running. Anything
 * that waits on the agent (/compact, /model) runs off the intake path: the poller hands updates over
 * one at a time, so awaiting it here would hold up every chat.
 */
export async function runCommand(d: TelegramDispatcher, c: CommandContext): Promise<Handled> {
  const reply = (text: string) => d.reply(c.route, text);
  const o = d.o;
  switch (c.spec.name) {
    case "help":
      await reply(helpText());
      break;
    case "stop":
      await reply(
        await stopRunningTurn(o.sessions, c.key, {
          router: d.router,
          approvals: d.registry,
          onError: (error) => o.logger.warn("telegram: stop failed", { error: String(error) }),
        }),
      );
      break;
    case "new": {
      if (o.sessions.isBusy(c.key)) {
        await reply("A turn is still running: /stop it first, then /new.");
        break;
      }
      const next = d.advance(c.route);
      await o.sessions.evict(c.key, { carryTo: next });
      await reply("🆕 Fresh conversation started.");
      break;
    }
    case "compact":
      return compact(d, c);
    case "model":
      // The menu comes from the agent, which may have to start first.
      return { turn: d.models.post(c.route, c.userId, c.key) };
    case "status":
      await reply(statusText(d, c));
      break;
    case "yolo":
      await reply(o.grant ? o.grant.command(c.arg) : "Auto-approve is not available here.");
      break;
    case "temporary":
    case "incognito":
      await applyPrivacy(d, c, c.spec.name === "temporary" ? MODE_TEMPORARY : MODE_INCOGNITO);
      break;
    case "title":
      await reply(title(d, c));
      break;
    case "link":
      await reply(
        await rebindConversationLocation(d.store, {
          key: c.key,
          location: locationOf(c.route),
          unlinkCommand: "/unlink",
        }),
      );
      break;
    case "unlink": {
      const { text } = await releaseConversationLocation(d.store, {
        key: c.key,
        location: locationOf(c.route),
        channel: "telegram",
        logger: o.logger,
      });
      await reply(text);
      break;
    }
    case "sessions":
      await reply(sessionsText(d, c));
      break;
    default:
      await reply(usageOf(c.spec));
  }
  return NOTHING;
}

/**
 * The shared compaction (atomic: it holds the session lock, or answers busy), answered with a terse
 * receipt of what the agent reported. Messages that arrived meanwhile were held behind the lock, so
 * they are drained once the receipt is out, as after any turn.
 */
function compact(d: TelegramDispatcher, c: CommandContext): Handled {
  // Nothing is steered into the compaction: the provider refuses a steer while it compacts, so a
  // message meanwhile queues behind the lock.
  const turn = (async () => {
    try {
      const receipt = await compactSession(d.o.sessions, c.key, { newCommand: "/new" });
      await d.reply(c.route, receipt);
    } finally {
      await d.router.drain(c.key);
    }
  })();
  return { turn };
}

async function applyPrivacy(d: TelegramDispatcher, c: CommandContext, mode: PrivacyMode): Promise<void> {
  const applied = await d.privacy.applyMode(mode, c.key, {
    source: "telegram",
    caller: c.userId,
    notify: (notice) => d.reply(c.route, notice),
  });
  if (!applied) await d.reply(c.route, `This conversation is already ${mode}.`);
}

function title(d: TelegramDispatcher, c: CommandContext): string {
  const name = c.arg.replace(/\s+/g, " ").trim().slice(0, 80);
  if (!name) return usageOf(c.spec);
  // A restricted conversation persists nothing, a title included.
  if (d.privacy.isRestricted(c.key))
    return "This conversation is temporary or incognito, so its title is not saved.";
  recordManualTitle(d.store, c.key, name);
  return `✏️ Title set: ${name}`;
}

function statusText(d: TelegramDispatcher, c: CommandContext): string {
  const o = d.o;
  const mode = d.privacy.modeOf(c.key) ?? "normal";
  const approve = o.grant?.isActive()
    ? "ON (gateway-wide /yolo)"
    : d.trust.isSessionTrusted(c.key)
      ? "trusted (this conversation)"
      : "off";
  const titled = d.store.titleOf(c.key)?.title;
  return [
    "**Status**",
    `• Conversation: ${c.route.chatType === "forum" ? "forum topic" : "private chat"}, generation ${d.conversations.generation(c.route.route)}`,
    ...(titled ? [`• Title: ${titled}`] : []),
    `• Turn: ${o.sessions.isBusy(c.key) ? "running" : "idle"}`,
    `• Queued: ${d.router.receiptQueue(c.key).size}`,
    `• Privacy: ${mode}`,
    `• Auto-approve: ${approve}`,
  ].join("\n");
}

/**
 * A host-wide listing: refused outside a private chat (a Topic is readable by the whole group) and
 * without exactly one allow-listed user (an allow-list names who may talk, not who owns the host).
 */
function sessionsText(d: TelegramDispatcher, c: CommandContext): string {
  const o = d.o;
  if (c.route.chatType !== "direct") {
    o.audit.log("telegram.sessions", "refused", { user: c.userId, reason: "shared_topic_audience" });
    return "Session listings are only shown in a private chat with the bot.";
  }
  if (o.ownerCount !== 1) {
    o.audit.log("telegram.sessions", "refused", { user: c.userId, reason: "no_unambiguous_owner" });
    return "Session listings need exactly one allow-listed user (telegram.allowedUserIds), so they are off here.";
  }
  o.audit.log("telegram.sessions", "allowed", { user: c.userId });
  const keys = [...new Set([...o.sessions.activeKeys(), ...d.store.keys()])].sort();
  if (keys.length === 0) return "No sessions yet.";
  const lines = keys.slice(0, MAX_LISTED).map((key) => {
    const t = d.store.titleOf(key)?.title;
    const running = o.sessions.isBusy(key) ? " (running)" : "";
    return `• ${t ? `${t} — ` : ""}\`${key}\`${running}`;
  });
  const more = keys.length > MAX_LISTED ? [`…and ${keys.length - MAX_LISTED} more`] : [];
  return ["**Sessions**", ...lines, ...more].join("\n");
}
