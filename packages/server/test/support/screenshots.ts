import { fileURLToPath } from "node:url"
import { screenshotFile } from "../../../../test/screenshots.js"

/**
 * Where a browser test saves one of the README's screenshots, `docs/<name>` (a PNG file name such as
 * `"console.png"`): the repository's `docs/` folder only under `pnpm docs:screenshots` (which sets
 * `DASHSTREAM_SCREENSHOTS=1`), otherwise a file in this run's directory (`screenshotFile`, removed after the run), so
 * `pnpm test` takes the same screenshot (the page still has to render), leaves every tracked file as it was, and two
 * runs at once never write one file.
 */
export const screenshotPath = (name: string): string =>
  process.env["DASHSTREAM_SCREENSHOTS"] === "1"
    ? fileURLToPath(new URL(`../../../../docs/${name}`, import.meta.url))
    : screenshotFile(name)
