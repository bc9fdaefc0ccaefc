/**
 * The Connector's inbound half: activities as Teams posts them to a bot's messaging endpoint, each
 * with an `Authorization: Bearer` JWT signed by the fake's key (iss https://api.botframework.com,
 * aud the app id, the serviceurl claim, nbf/exp). Every conversation type (personal, group chat,
 * channel), card submits (an Action.Submit is an ordinary message activity carrying `value`),
 * install and uninstall events (conversationUpdate membersAdded, installationUpdate), typing, quote-replies (a
 * text/html attachment whose Reply blockquote holds the quoted preview, the user's words after it;
 * `text` the user's words only, since no reference says Teams puts the quote there) and files (file.download.info, inline images). Bad tokens on request: expired, wrong
 * audience or issuer, a rogue key, a Web Chat key, alg none, a mismatched serviceurl, none at all.
 */
import { randomBytes } from "node:crypto";
import type { SigningKey } from "./keys.js";
import { mintJwt } from "./keys.js";
import type { FakeTeams, FakeTeamsUser, Json } from "./server.js";

export type ConversationKind = "personal" | "groupChat" | "channel";

export interface TokenOptions {
  key?: "teams" | "webchat" | "rogue";
  aud?: string;
  iss?: string;
  /** Seconds from now; negative = expired that long ago. */
  expiresIn?: number;
  serviceUrl?: string;
  alg?: string;
  kid?: string;
}

export interface PostResult {
  status: number;
  body: string;
}

export class TeamsDriver {
  private seq = 0;

  constructor(
    private readonly fake: FakeTeams,
    /** parley's messaging endpoint, e.g. http://127.0.0.1:PORT/api/messages. */
    private readonly endpoint: string,
  ) {}

  token(o: TokenOptions = {}): string {
    const key: SigningKey = this.fake.keys[o.key ?? "teams"];
    const now = Math.floor(Date.now() / 1000);
    return mintJwt(
      key,
      {
        serviceurl: o.serviceUrl ?? this.fake.serviceUrl,
        nbf: now - 60,
        exp: now + (o.expiresIn ?? 3600),
        iss: o.iss ?? this.fake.tokenIssuer,
        aud: o.aud ?? this.fake.appId,
      },
      { ...(o.alg ? { alg: o.alg } : {}), ...(o.kid ? { kid: o.kid } : {}) },
    );
  }

  /** POST an activity; `token: null` sends no Authorization header at all. */
  async post(
    activity: Json,
    o: { token?: string | null; tokenOptions?: TokenOptions } = {},
  ): Promise<PostResult> {
    const token = o.token === undefined ? this.token(o.tokenOptions) : o.token;
    const res = await fetch(this.endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(activity),
    });
    return { status: res.status, body: await res.text() };
  }

  conversationId(user: FakeTeamsUser, kind: ConversationKind): string {
    if (kind === "personal") return this.fake.personalConversation(user);
    return kind === "groupChat" ? "19:group-chat-one@thread.v2" : "19:general@thread.tacv2;messageid=1";
  }

  /** The envelope every activity shares. */
  envelope(user: FakeTeamsUser, kind: ConversationKind = "personal", extra: Json = {}): Json {
    this.seq += 1;
    const conversation: Json = {
      id: this.conversationId(user, kind),
      conversationType: kind,
      tenantId: this.fake.tenantId,
      ...(kind !== "personal" ? { isGroup: true } : {}),
    };
    return {
      id: `act-${this.seq}-${randomBytes(4).toString("hex")}`,
      timestamp: new Date().toISOString(),
      localTimestamp: new Date().toISOString(),
      channelId: "msteams",
      serviceUrl: this.fake.serviceUrl,
      from: { id: user.accountId, name: user.name, aadObjectId: user.aadObjectId },
      conversation,
      recipient: { id: `28:${this.fake.appId}`, name: "parley" },
      channelData: {
        tenant: { id: this.fake.tenantId },
        ...(kind === "channel"
          ? { team: { id: "19:team@thread.tacv2" }, channel: { id: "19:general@thread.tacv2" } }
          : {}),
      },
      locale: "en-US",
      ...extra,
    };
  }

  message(user: FakeTeamsUser, text: string, o: { kind?: ConversationKind; extra?: Json } = {}): Json {
    return this.envelope(user, o.kind, { type: "message", text, textFormat: "plain", ...o.extra });
  }

  /** What pressing an Action.Submit button sends: a message activity with the button's data as value. */
  submit(user: FakeTeamsUser, replyToId: string, value: Json): Json {
    return this.envelope(user, "personal", { type: "message", replyToId, value });
  }

  /**
   * Right-click → Reply in a 1:1 chat. The html body follows Graph's chatMessage examples; `text`
   * carries only the user's words (the activity spec's meaning of `text`): what Teams really puts
   * there for a quote has no official reference, so the fake invents no prefix.
   */
  quoteReply(user: FakeTeamsUser, quoted: string, words: string): Json {
    const html =
      `<blockquote itemscope="" itemtype="http://schema.skype.com/Reply" itemid="1700000000000">` +
      `<strong itemprop="mri" itemid="28:bot">parley</strong><span itemprop="time" itemid="1700000000000"></span>` +
      `<p itemprop="preview">${escapeHtml(quoted)}</p></blockquote><p>${escapeHtml(words)}</p>`;
    return this.message(user, words, {
      extra: { textFormat: "plain", attachments: [{ contentType: "text/html", content: html }] },
    });
  }

  /** The app was added to a personal chat (both shapes Teams sends). */
  install(user: FakeTeamsUser, kind: ConversationKind = "personal"): Json[] {
    return [
      this.envelope(user, kind, {
        type: "conversationUpdate",
        membersAdded: [{ id: `28:${this.fake.appId}` }],
      }),
      this.envelope(user, kind, { type: "installationUpdate", action: "add" }),
    ];
  }

  /** The app was removed from a personal chat: installationUpdate with action "remove". */
  uninstall(user: FakeTeamsUser): Json {
    return this.envelope(user, "personal", { type: "installationUpdate", action: "remove" });
  }

  /** The user is typing: an activity of type "typing", no text. */
  typing(user: FakeTeamsUser): Json {
    return this.envelope(user, "personal", { type: "typing" });
  }

  /** A file shared in a personal chat (supportsFiles): a download URL needing no credential. */
  fileMessage(user: FakeTeamsUser, name: string, downloadUrl: string, text = ""): Json {
    return this.message(user, text, {
      extra: {
        attachments: [
          {
            contentType: "application/vnd.microsoft.teams.file.download.info",
            name,
            content: {
              downloadUrl,
              uniqueId: randomBytes(8).toString("hex"),
              fileType: name.split(".").pop(),
            },
          },
        ],
      },
    });
  }

  /** A pasted image: a contentUrl on the Connector (or wherever Teams says). */
  imageMessage(user: FakeTeamsUser, contentUrl: string, text = ""): Json {
    return this.message(user, text, {
      extra: { attachments: [{ contentType: "image/png", contentUrl, name: "image.png" }] },
    });
  }
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
