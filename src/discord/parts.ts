/**
 * A Discord message as one of a turn's parts: a resumed turn edits what its first run posted there,
 * and the part's stable key travels as Discord's nonce (enforce_nonce), so even a part whose first
 * creation crashed unconfirmed is not created twice.
 */
import { createHash } from "node:crypto";
import type { TurnParts } from "../messaging/channel/delivery.js";
import type { UploadFile } from "./client.js";
import type { MessageBody } from "./payload.js";
import type { DiscordRest } from "./transport.js";

/** Create a message as the turn's next part: its id, or "" when it did not land. */
export async function createPart(
  rest: Pick<DiscordRest, "createMessage" | "editMessage">,
  channelId: string,
  parts: TurnParts,
  body: MessageBody,
  files: UploadFile[] = [],
): Promise<string> {
  const content = JSON.stringify([body.content, body.components ?? null, files.map((f) => f.name)]);
  const id = await parts.post(content, {
    create: async (key) => {
      const nonce = key === undefined ? {} : { nonce: discordNonce(key) };
      const res = await rest.createMessage(channelId, { ...body, ...nonce }, files);
      return res.ok ? res.data.id : null;
    },
    replace: async (earlier) =>
      (await rest.editMessage(channelId, earlier, { ...body, components: body.components ?? [] }, files)).ok,
  });
  return id ?? "";
}

/** A part key as a nonce: Discord takes at most 25 characters, so a digest of it. */
function discordNonce(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 25);
}
