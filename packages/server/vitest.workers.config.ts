import { defineProject } from "vitest/config"
import { resolveSource } from "../../vitest.shared.js"

/**
 * The end-to-end files where the number of server processes matters, run against `serve --workers 2` on SQLite (the
 * file written by two processes, each with its own group commit; live updates relayed between them; per-server rate
 * limit, event-stream bound and metrics): pushes and reads, concurrent deltas and cursors, live event streams, admin
 * changes, metrics, decimation. The `server` project runs every e2e file with one process on SQLite and PostgreSQL;
 * PostgreSQL with several processes is what several servers on one database already are. The files left out here
 * test one request at a time against the contract (widget types, compatibility, errors), which one worker answers
 * whole, or restart servers (lifecycle; shutdown and killed workers are in test/Workers.test.ts).
 */
export default defineProject({
  ...resolveSource,
  test: {
    name: "server-workers",
    include: [
      "test/e2e/push-read.test.ts",
      "test/e2e/concurrency.test.ts",
      "test/e2e/live.test.ts",
      "test/e2e/admin.test.ts",
      "test/e2e/metrics.test.ts",
      "test/e2e/decimation.test.ts"
    ],
    env: { DASHSTREAM_TEST_WORKERS: "2", DASHSTREAM_E2E_BACKENDS: "sqlite" }
  }
})
