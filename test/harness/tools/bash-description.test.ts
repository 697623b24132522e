// The bound bash's description states, in words that agree with their count: `--max-lines 1` read
// "bounded to the last 1 lines or 50.0 KB" in the description every client shows its model.
import { describe, expect, it } from "vitest";
import { createBashTool } from "../../../src/harness/index.js";

describe("bash's description", () => {
  it("names its line bound as '1 line' or 'N lines'", () => {
    expect(createBashTool({ maxLines: 1 }).description).toMatch(/ bounded to the last 1 line or [\d.]+ KB, whichever is less; /);
    expect(createBashTool({ maxLines: 1, retain: "head" }).description).toMatch(/ bounded to the first 1 line or /);
    expect(createBashTool().description).toMatch(/ bounded to the last 2000 lines or [\d.]+ KB, whichever is less; /);
  });
});
