import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/bench/**", "node_modules/**"],
    // Property tests and the CLI end-to-end tests spawn tsx; give them room on a 2-core machine.
    testTimeout: 30_000,
  },
});
