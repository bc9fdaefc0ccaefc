/**
 * The entry: handles normalized on the way in (`+61 400 000 000` is `+61400000000`), the executable
 * and database paths refused with a line break or NUL (they become a child's argv) and accepted only
 * from trusted configuration, and the channel off until its section exists (no credential to say so).
 */
import { describe, expect, it } from "vitest";
import { normalizeHandle } from "../../src/imessage/handles.js";
import { imessageChannel, imessageSettingsSchema } from "../../src/imessage/index.js";
import { probeChannel } from "../../src/messaging/channel/contract.js";

describe("iMessage settings", () => {
  it("normalizes handles on both sides: phone digits with +, email lowercase", () => {
    expect(normalizeHandle("+61 400 000 000")).toBe("+61400000000");
    expect(normalizeHandle("+61400000000")).toBe("+61400000000");
    expect(normalizeHandle("(555) 123-4567")).toBe("5551234567");
    expect(normalizeHandle(" Me@iCloud.COM ")).toBe("me@icloud.com");
    for (const bad of ["", "a@b@c", "@x", "x@", "12", "+1 (555) abc", "me @x.com", "+1+2"])
      expect(normalizeHandle(bad), bad).toBeNull();
    const s = imessageSettingsSchema.parse({ allowedHandles: ["+61 400 000 000", "Me@iCloud.com"] });
    expect(s.allowedHandles).toEqual(["+61400000000", "me@icloud.com"]);
    expect(s.cliPath).toBe("imsg");
    expect(s.service).toBe("auto");
    expect(() => imessageSettingsSchema.parse({ allowedHandles: ["not a handle"] })).toThrow(
      /iMessage handle/,
    );
  });

  it("refuses a line break or NUL in cliPath or dbPath, and declares both security keys", () => {
    for (const key of ["cliPath", "dbPath"]) {
      expect(() => imessageSettingsSchema.parse({ [key]: "/usr/local/bin/imsg\n--evil" })).toThrow(
        /line breaks/,
      );
      expect(() => imessageSettingsSchema.parse({ [key]: "/usr/local/bin/imsg\0x" })).toThrow(/line breaks/);
      expect(imessageChannel.securityKeys).toContain(key);
    }
    expect(imessageChannel.securityKeys).toContain("allowedHandles");
    expect(imessageChannel.settingEnv).toEqual({ cliPath: "IMESSAGE_CLI_PATH", dbPath: "IMESSAGE_DB_PATH" });
    expect(() => imessageSettingsSchema.parse({ service: "carrier-pigeon" })).toThrow();
  });

  it("is off without a section, incomplete without handles, configured with them", () => {
    const settings = (section: Record<string, unknown>) => imessageSettingsSchema.parse(section);
    expect(probeChannel(imessageChannel, settings({}), {}, false).status).toBe("disabled");
    expect(probeChannel(imessageChannel, settings({}), {}, true)).toEqual({
      status: "incomplete",
      missing: ["imessage.allowedHandles"],
    });
    expect(
      probeChannel(imessageChannel, settings({ allowedHandles: ["+15550001111"] }), {}, true).status,
    ).toBe("configured");
    expect(
      probeChannel(imessageChannel, settings({ enabled: false, allowedHandles: ["+15550001111"] }), {}, true)
        .status,
    ).toBe("disabled");
  });
});
