import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // every prepareHistory in a test checks its output against the provider rules (validateForProvider)
    env: { SPOOL_DEBUG_CONTEXT: "1" },
  },
});
