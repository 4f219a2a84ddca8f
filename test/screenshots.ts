import { join } from "node:path"
import { inject } from "vitest"
import type {} from "./screenshotSetup.js"

/**
 * Path of the screenshot `name` (a file name such as `"wall-text.png"`) in this run's directory, which
 * `test/screenshotSetup.ts` makes before the run and removes after it. Only in a project that lists that global setup.
 */
export const screenshotFile = (name: string): string => join(inject("screenshotDir"), name)
