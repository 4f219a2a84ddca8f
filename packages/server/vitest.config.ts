import { fileURLToPath } from "node:url"
import { configDefaults, defineProject, type TestProjectInlineConfiguration } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

/**
 * The end-to-end files (one suite per backend of the harness) and the browser test among them (one server). Every
 * project installs what its tests drive when it is missing: Chromium, Debian's nginx (the reverse proxy suites).
 */
const e2eFiles = "test/e2e/*.test.ts"
const browserFiles = "test/e2e/*.browser.test.ts"
const globalSetup = [
  "test/support/buildSetup.ts",
  "test/support/browserSetup.ts",
  "test/support/nginxSetup.ts",
  "../../test/screenshotSetup.ts"
]
/**
 * The end-to-end suites also drive Debian's InfluxDB clients (the line protocol suite) and Prometheus Alertmanager (the
 * alert delivery suite), installed when missing.
 */
const e2eGlobalSetup = [...globalSetup, "test/support/influxClientsSetup.ts", "test/support/alertmanagerSetup.ts"]

/** The server's own tests: the CLI, processes, decimation, copy, and the dashboard page in a browser. */
export default defineProject({
  ...resolveSource,
  test: {
    ...sharedTest,
    name: "server",
    include: ["test/*.test.ts", browserFiles],
    globalSetup
  }
})

/**
 * The end-to-end suites as one project per backend (`DASHSTREAM_E2E_BACKENDS`, see test/e2e/harness.ts), listed by
 * the root vitest.config.ts: the SQLite and PostgreSQL halves of each file are two test files' worth of work that
 * run in parallel, rather than one after the other in one file. The whole suite runs a third time against
 * `serve --workers 2` on SQLite (the file written by two processes, each with its own group commit; live
 * updates relayed between them; per-server rate limit, event-stream bound and metrics). PostgreSQL with several
 * processes is what several servers on one database already are (test/multiprocess.test.ts,
 * test/live-multiprocess.test.ts, test/Workers.test.ts).
 */
export const e2eProjects: Array<TestProjectInlineConfiguration> = [
  { name: "e2e-sqlite", backend: "sqlite", workers: "1" },
  { name: "e2e-postgres", backend: "postgres", workers: "1" },
  { name: "e2e-sqlite-workers", backend: "sqlite", workers: "2" }
].map(({ name, backend, workers }) => ({
  ...resolveSource,
  root: fileURLToPath(new URL(".", import.meta.url)),
  test: {
    ...sharedTest,
    name,
    include: [e2eFiles],
    // The outage suite stops a PostgreSQL server of its own, the alerts cluster suite runs three processes on one
    // PostgreSQL database, and the database-down suite cuts PostgreSQL's connections: they belong to the PostgreSQL
    // project only.
    exclude: [
      ...configDefaults.exclude,
      browserFiles,
      ...(backend === "postgres"
        ? []
        : ["test/e2e/outage.test.ts", "test/e2e/alertsCluster.test.ts", "test/e2e/alertsDatabaseDown.test.ts"])
    ],
    env: { DASHSTREAM_E2E_BACKENDS: backend, DASHSTREAM_TEST_WORKERS: workers },
    globalSetup: e2eGlobalSetup
  }
}))
