/**
 * The button-data grammar every channel's buttons carry: an approval's parts read right to left (a
 * request id with ':' stays whole; a nonce-less legacy id fails closed), only the channel's codes
 * accepted; an indexed choice is at most three digits, no leading zero.
 */
import { describe, expect, it } from "vitest";
import {
  approvalButtonData,
  parseApprovalButton,
  parseIndexedButton,
} from "../../../src/messaging/channel/button-data.js";

describe("button data", () => {
  it("an approval round-trips, a request id with ':' whole", () => {
    const data = approvalButtonData("tool:call:7", "n0nce", "1");
    expect(data).toBe("a:tool:call:7:n0nce:1");
    expect(parseApprovalButton(data, ["1", "0"])).toEqual({
      requestId: "tool:call:7",
      nonce: "n0nce",
      code: "1",
    });
  });

  it("refuses a code the channel does not offer, a missing nonce, and other data", () => {
    expect(parseApprovalButton("a:req:n:g", ["1", "0"])).toBeNull();
    expect(parseApprovalButton("a:req:1", ["1", "0"])).toBeNull();
    expect(parseApprovalButton("a::n:1", ["1", "0"])).toBeNull();
    expect(parseApprovalButton("opt:1", ["1", "0"])).toBeNull();
  });

  it("an index is 0 to 999 without a leading zero, under its own prefix only", () => {
    expect(parseIndexedButton("opt:0", "opt")).toBe(0);
    expect(parseIndexedButton("opt:999", "opt")).toBe(999);
    expect(parseIndexedButton("opt:1000", "opt")).toBeNull();
    expect(parseIndexedButton("opt:01", "opt")).toBeNull();
    expect(parseIndexedButton("m:3", "opt")).toBeNull();
  });
});
