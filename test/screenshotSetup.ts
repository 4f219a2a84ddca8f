import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory of this run's screenshots (see `test/screenshots.ts`). */
    screenshotDir: string
  }
}

/**
 * Vitest global setup of every project whose browser tests take screenshots: a directory of this run's own in the
 * temporary directory, made with `mkdtemp` (runs at once never write one file), handed to the tests
 * (`screenshotFile`), and removed with everything in it when the run ends.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-screenshots-"))
  project.provide("screenshotDir", dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
