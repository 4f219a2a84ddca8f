import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Where a browser test saves one of the README's screenshots, `docs/<name>` (a PNG file name such as
 * `"console.png"`): the repository's `docs/` folder only under `pnpm docs:screenshots` (which sets
 * `DASHSTREAM_SCREENSHOTS=1`), otherwise a file in the temporary directory, so `pnpm test` takes the same screenshot
 * (the page still has to render) and leaves every tracked file as it was.
 */
export const screenshotPath = (name: string): string =>
  process.env["DASHSTREAM_SCREENSHOTS"] === "1"
    ? fileURLToPath(new URL(`../../../../docs/${name}`, import.meta.url))
    : join(tmpdir(), `dashstream-screenshot-${process.pid}-${name}`)
