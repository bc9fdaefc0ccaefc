/**
 * The fake's signing keys and its JWT minting, written with node:crypto (RS256 over the JOSE
 * compact form). Three keys: the channel's key, published and endorsed for `msteams` among others;
 * a key published but endorsed only for Web Chat and Direct Line (never valid for Teams); and
 * a rogue key that is never published (a forger's). Made once per test process: RSA generation is
 * the slow part and the keys carry no per-test state.
 */
import type { KeyObject } from "node:crypto";
import { createPublicKey, generateKeyPairSync, sign } from "node:crypto";

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** JWKS entry (kty, n, e, kid, endorsements); absent for the rogue key. */
  jwk: Record<string, unknown>;
}

export interface FakeKeys {
  teams: SigningKey;
  webchat: SigningKey;
  rogue: SigningKey;
}

let keys: FakeKeys | undefined;

function makeKey(kid: string, endorsements: string[]): SigningKey {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pub = createPublicKey(privateKey).export({ format: "jwk" });
  return { kid, privateKey, jwk: { kty: "RSA", use: "sig", kid, n: pub.n, e: pub.e, endorsements } };
}

export function fakeKeys(): FakeKeys {
  keys ??= {
    // Like Microsoft's own keys: one key endorsed for many channels, so the activity's channelId
    // (checked by parley, positively) is what tells Teams from Web Chat, not the key.
    teams: makeKey("fake-teams-key", ["msteams", "webchat", "directline", "skype"]),
    webchat: makeKey("fake-webchat-key", ["webchat", "directline"]),
    rogue: makeKey("fake-rogue-key", ["msteams"]),
  };
  return keys;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

/** A compact JWS: header and claims as given, signed RS256 with `key` (alg "none" sends no signature). */
export function mintJwt(
  key: SigningKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  const head = { alg: "RS256", typ: "JWT", kid: key.kid, ...header };
  const input = `${b64url(JSON.stringify(head))}.${b64url(JSON.stringify(claims))}`;
  if (head.alg === "none") return `${input}.`;
  return `${input}.${b64url(sign("RSA-SHA256", Buffer.from(input), key.privateKey))}`;
}
