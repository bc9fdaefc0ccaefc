/**
 * botbuilder wiring: a CloudAdapter over ConfigurationBotFrameworkAuthentication, so inbound JWT
 * validation (the issuer, the audience, expiry with five minutes' skew, the signing key and its
 * endorsement for the activity's channel, the serviceurl claim against the activity) and the bot's
 * token acquisition are the SDK's own. What parley adds sits at the SDK's documented seams: the
 * credentials factory gets an MSAL client whose password cannot leave the login origin
 * (identity.ts), and the ConnectorClient gets an HTTP client that sends the bot's token only to an
 * allowed Connector host, paces, retries and types its failures (connector-http.ts).
 *
 * Every outbound call goes through `continueConversationAsync` with the conversation's stored
 * reference: the answer to a message is never sent from the inbound request (the Connector gives
 * up on that after ~15 s), so the request is acknowledged once the message is journaled and the
 * turn replies from the background.
 */
import type { Activity, ConversationReference, TurnContext } from "botbuilder";
import { ActivityTypes, CloudAdapter, ConfigurationBotFrameworkAuthentication, TeamsInfo } from "botbuilder";
import type { ClaimsIdentity } from "botframework-connector";
import { MsalServiceClientCredentialsFactory } from "botframework-connector";
import type { Clock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { ConnectorHttpOptions } from "./connector-http.js";
import { ConnectorHttp } from "./connector-http.js";
import { TeamsSendError, teamsSendErrorOf } from "./errors.js";
import { botCredential } from "./identity.js";

/** The audience the bot's Connector tokens are issued for (public cloud). */
const CONNECTOR_SCOPE = "https://api.botframework.com";

export interface TeamsClientOptions {
  appId: string;
  password: string;
  /** `${loginUrl}/${tenant}`: where the password is presented. */
  authority: string;
  tenantId: string;
  openIdMetadataUrl: string;
  tokenIssuer: string;
  /** Whether a URL is on an allowed Connector host (the serviceUrl allow-list). */
  admits(url: URL): boolean;
  clock: Clock;
  logger: Logger;
  connector?: Partial<Omit<ConnectorHttpOptions, "admits" | "clock" | "logger">>;
  fetch?: typeof fetch;
}

/** Where one personal conversation is reached: what `continueConversationAsync` needs. */
export interface TeamsReference {
  conversationId: string;
  serviceUrl: string;
  tenantId?: string;
  /** The user's Teams account id (29:…). */
  userAccountId: string;
  /** The bot's account id (28:<app id>) and display name. */
  botId: string;
  botName?: string;
}

/** A member as the Connector describes them (the UPN is not on activities). */
export interface TeamsMember {
  id: string;
  aadObjectId?: string;
  email?: string;
  userPrincipalName?: string;
  name?: string;
}

/** The outbound activity shapes parley sends: text, cards, images. */
export type OutboundActivity = Partial<Activity>;

export class TeamsClient {
  readonly adapter: CloudAdapter;
  readonly http: ConnectorHttp;
  private readonly credentials: MsalServiceClientCredentialsFactory;

  constructor(private readonly o: TeamsClientOptions) {
    this.http = new ConnectorHttp({
      admits: o.admits,
      clock: o.clock,
      logger: o.logger,
      ...(o.fetch ? { fetch: o.fetch } : {}),
      ...o.connector,
    });
    // The SDK was typed against MSAL's CommonJS declarations; the client is the same class.
    type MsalClient = ConstructorParameters<typeof MsalServiceClientCredentialsFactory>[1];
    this.credentials = new MsalServiceClientCredentialsFactory(
      o.appId,
      botCredential({
        appId: o.appId,
        password: o.password,
        authority: o.authority,
        clock: o.clock,
        logger: o.logger,
        ...(o.fetch ? { fetch: o.fetch } : {}),
      }) as unknown as MsalClient,
    );
    const auth = new ConfigurationBotFrameworkAuthentication(
      {
        MicrosoftAppId: o.appId,
        MicrosoftAppTenantId: o.tenantId,
        ToChannelFromBotLoginUrl: o.authority,
        ToChannelFromBotOAuthScope: CONNECTOR_SCOPE,
        ToBotFromChannelTokenIssuer: o.tokenIssuer,
        ToBotFromChannelOpenIdMetadataUrl: o.openIdMetadataUrl,
        // Only the channel path is ever taken (server.ts admits no other issuer); should the SDK
        // still reach for the emulator's keys, it looks at the configured origin, not another.
        ToBotFromEmulatorOpenIdMetadataUrl: o.openIdMetadataUrl,
        OAuthUrl: CONNECTOR_SCOPE,
        ValidateAuthority: true,
      },
      this.credentials,
      { requiredEndorsements: [] },
      undefined,
      { httpClient: this.http },
    );
    this.adapter = new CloudAdapter(auth);
  }

  /** The claims the SDK validated for an inbound activity (read only after its validation). */
  claimsOf(ctx: TurnContext): { issuer: string; serviceUrl: string } {
    const identity = ctx.turnState.get(this.adapter.BotIdentityKey) as ClaimsIdentity | undefined;
    return {
      issuer: identity?.getClaimValue("iss") ?? "",
      serviceUrl: identity?.getClaimValue("serviceurl") ?? "",
    };
  }

  /** The bot's Connector token (cached by the SDK): offered only to a Connector host. */
  async connectorToken(): Promise<string> {
    const credentials = await this.credentials.createCredentials(
      this.o.appId,
      CONNECTOR_SCOPE,
      this.o.authority,
      true,
    );
    return (credentials as unknown as { getToken(): Promise<string> }).getToken();
  }

  private reference(r: TeamsReference): Partial<ConversationReference> {
    return {
      channelId: "msteams",
      serviceUrl: r.serviceUrl,
      conversation: {
        id: r.conversationId,
        conversationType: "personal",
        isGroup: false,
        name: "",
        ...(r.tenantId ? { tenantId: r.tenantId } : {}),
      },
      bot: { id: r.botId, name: r.botName ?? "" },
      user: { id: r.userAccountId, name: "" },
    };
  }

  /** Run `work` in a proactive turn of the conversation; a Connector failure surfaces typed. */
  private async proactive<T>(r: TeamsReference, work: (ctx: TurnContext) => Promise<T>): Promise<T> {
    let result: T | undefined;
    let done = false;
    try {
      await this.adapter.continueConversationAsync(this.o.appId, this.reference(r), async (ctx) => {
        result = await work(ctx);
        done = true;
      });
    } catch (error) {
      throw teamsSendErrorOf(error) ?? new TeamsSendError(0, "the Teams call failed", { cause: error });
    }
    if (!done) throw new TeamsSendError(0, "the Teams call did not run");
    return result as T;
  }

  /** Post an activity; its id (Teams always returns one for a message it accepted). */
  send(r: TeamsReference, activity: OutboundActivity): Promise<string> {
    return this.proactive(r, async (ctx) => {
      const res = await ctx.sendActivity(activity);
      const id = res?.id ?? "";
      if (!id) throw new TeamsSendError(200, "Teams accepted a message without naming it");
      return id;
    });
  }

  /** Replace a message the bot posted (its text, cards, or both). */
  update(r: TeamsReference, id: string, activity: OutboundActivity): Promise<void> {
    return this.proactive(r, async (ctx) => {
      await ctx.updateActivity({ type: ActivityTypes.Message, ...activity, id });
    });
  }

  /** The typing indicator (a few seconds on Teams' side). */
  typing(r: TeamsReference): Promise<void> {
    return this.proactive(r, async (ctx) => {
      await ctx.sendActivity({ type: ActivityTypes.Typing });
    });
  }

  /** The member behind an inbound activity, looked up within that activity's own turn. */
  async memberOf(ctx: TurnContext, userAccountId: string): Promise<TeamsMember> {
    try {
      const m = await TeamsInfo.getMember(ctx, userAccountId);
      return {
        id: m.id,
        ...(m.aadObjectId ? { aadObjectId: m.aadObjectId } : {}),
        ...(m.email ? { email: m.email } : {}),
        ...(m.userPrincipalName ? { userPrincipalName: m.userPrincipalName } : {}),
        ...(m.name ? { name: m.name } : {}),
      };
    } catch (error) {
      throw teamsSendErrorOf(error) ?? new TeamsSendError(0, "the member lookup failed", { cause: error });
    }
  }
}
